package metrics

import (
	"crypto/fips140"

	"github.com/lifecycle-manager/api/publicmetrics"

	"github.com/prometheus/client_golang/prometheus"
)

// PublicFailedRequest is the only error_reason of the public agent's
// watcher_failed_kcp_total that the agent has a meaning for: a request to
// the KCP that failed or was refused.
const PublicFailedRequest = "failed-request"

// DurationHistogram is the admission duration histogram that also keeps
// the public runtime-watcher agent's watcher_request_duration, the
// duration of the last review, so that no observation can reach one
// without the other.
type DurationHistogram struct {
	prometheus.Histogram
	last prometheus.Gauge
}

// Observe adds seconds to the histogram and makes it the last duration.
func (d *DurationHistogram) Observe(seconds float64) {
	d.Histogram.Observe(seconds)
	d.last.Set(seconds)
}

func newDurationHistogram(opts prometheus.HistogramOpts) *DurationHistogram {
	return &DurationHistogram{
		Histogram: prometheus.NewHistogram(opts),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "watcher_request_duration", Help: "Indicates average request handling duration (of the last admission review)",
		}),
	}
}

// publicNames are the agent's metrics under the names and labels of the
// public runtime-watcher agent, for the dashboards and alerts written for
// it. They are computed at every scrape from the agent's own series, so
// that the two cannot disagree.
type publicNames struct {
	m                                                     *Metrics
	admissions, admissionErrors, kcpRequests, kcpFailures *prometheus.Desc
}

func newPublicNames(m *Metrics) *publicNames {
	return &publicNames{
		m:               m,
		admissions:      prometheus.NewDesc("watcher_admission_request_total", "Indicates total incoming admission requests count", nil, nil),
		admissionErrors: prometheus.NewDesc("watcher_admission_request_error_total", "Indicates total admission requests parsing error count", nil, nil),
		kcpRequests: prometheus.NewDesc("watcher_kcp_requests_total",
			"Indicates total requests to KCP count (delivery attempts, retries included)", nil, nil),
		kcpFailures: prometheus.NewDesc("watcher_failed_kcp_total",
			"Indicates total failed requests to KCP count", []string{"error_reason"}, nil),
	}
}

func (p *publicNames) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.admissions, p.admissionErrors, p.kcpRequests, p.kcpFailures} {
		ch <- d
	}
}

func (p *publicNames) Collect(ch chan<- prometheus.Metric) {
	var admissions, admissionErrors, forwarded, failed float64
	publicmetrics.EachSeries(p.m.AdmissionRequests, func(labels map[string]string, n float64) {
		admissions += n
		if labels["decision"] == DecisionInvalid {
			admissionErrors += n
		}
	})
	publicmetrics.EachSeries(p.m.EventsForwarded, func(_ map[string]string, n float64) { forwarded += n })
	publicmetrics.EachSeries(p.m.EventsFailed, func(labels map[string]string, n float64) {
		switch labels["reason"] {
		case ReasonTransport, ReasonServerError, ReasonThrottled, ReasonUnauthorized, ReasonRejected:
			failed += n
		}
	})
	ch <- prometheus.MustNewConstMetric(p.admissions, prometheus.CounterValue, admissions)
	ch <- prometheus.MustNewConstMetric(p.admissionErrors, prometheus.CounterValue, admissionErrors)
	ch <- prometheus.MustNewConstMetric(p.kcpRequests, prometheus.CounterValue, forwarded+failed)
	ch <- prometheus.MustNewConstMetric(p.kcpFailures, prometheus.CounterValue, failed, PublicFailedRequest)
}

// newFIPSMode is the public agent's watcher_fips_mode.
func newFIPSMode() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "watcher_fips_mode", Help: "current FIPS mode (0=off/1=on/2=only)",
	}, func() float64 {
		switch {
		case fips140.Enforced():
			return 2
		case fips140.Enabled():
			return 1
		}
		return 0
	})
}
