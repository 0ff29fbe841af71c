package docgen

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeNamesTypesAndLabels(t *testing.T) {
	rec := &recorder{reg: prometheus.NewRegistry()}
	rec.MustRegister(
		prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: `counts "things" | more`}, []string{"result", "kind"}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pace", Help: "a pace"}, func() float64 { return 1 }),
		prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seconds", Help: "a histogram"}),
		prometheus.NewSummary(prometheus.SummaryOpts{Name: "summary", Help: "a summary"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "backlog", Help: "per controller", ConstLabels: prometheus.Labels{"controller": "kyma"}}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "backlog", Help: "per controller", ConstLabels: prometheus.Labels{"controller": "a,b=\"c\""}}),
	)
	got, err := rec.describe()
	require.NoError(t, err)
	assert.Equal(t, []Metric{
		{Name: "backlog", Type: "gauge", Help: "per controller", ConstLabels: map[string][]string{"controller": {"a,b=\"c\"", "kyma"}}},
		{Name: "c_total", Type: "counter", Help: `counts "things" | more`, Labels: []string{"result", "kind"}, ConstLabels: map[string][]string{}},
		{Name: "pace", Type: "gauge", Help: "a pace", ConstLabels: map[string][]string{}},
		{Name: "seconds", Type: "histogram", Help: "a histogram", ConstLabels: map[string][]string{}},
		{Name: "summary", Type: "summary", Help: "a summary", ConstLabels: map[string][]string{}},
	}, got, "a Gauge passes for a Counter and a Summary for a Histogram by interface: the type comes from what they collect")
}

// wrapped is a vector inside a type of its own, as a package wraps one to
// observe two metrics at once.
type wrapped struct{ *prometheus.HistogramVec }

func (w wrapped) WithLabelValues(lvs ...string) prometheus.Observer {
	return w.HistogramVec.WithLabelValues(lvs...)
}

// mirror sends const metrics: one series it always has, one only with data.
type mirror struct{ always, sometimes *prometheus.Desc }

func (m mirror) Describe(ch chan<- *prometheus.Desc) { ch <- m.always; ch <- m.sometimes }

func (m mirror) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(m.always, prometheus.CounterValue, 0, "a")
}

// TestTypesComeFromWhatCollectorsCollect: a collector of several metrics
// types each by its own series; a wrapped vector is probed through its
// WithLabelValues; a metric that had no series says so instead of
// borrowing another's type.
func TestTypesComeFromWhatCollectorsCollect(t *testing.T) {
	rec := &recorder{reg: prometheus.NewRegistry()}
	rec.MustRegister(
		wrapped{prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "duration_seconds", Help: "h"}, []string{"manager"})},
		mirror{
			always:    prometheus.NewDesc("public_total", "p", []string{"server"}, nil),
			sometimes: prometheus.NewDesc("public_state", "s", []string{"kyma", "state"}, nil),
		},
	)
	got, err := rec.describe()
	require.NoError(t, err)
	types := map[string]string{}
	for _, m := range got {
		types[m.Name] = m.Type
	}
	assert.Equal(t, map[string]string{"duration_seconds": "histogram", "public_state": "—", "public_total": "counter"}, types)
}

func TestParseDescRefusesWhatItDoesNotKnow(t *testing.T) {
	_, err := parseDesc(`Desc{fqName: "x", help: "y"}`)
	assert.ErrorContains(t, err, "unexpected metric description")
}
