package metrics_test

import (
	"crypto/fips140"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lifecycle-manager/api/publicmetrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/metrics"
)

func TestPublicNamesFollowOurs(t *testing.T) {
	tests := []struct {
		name      string
		decisions map[string]int // admission reviews by decision
		forwarded int
		failed    map[string]int // by reason
		want      string
	}{
		{
			name: "nothing yet: every series is there at 0",
			want: "watcher_admission_request_error_total 0\nwatcher_admission_request_total 0\n" +
				"watcher_failed_kcp_total{error_reason=\"failed-request\"} 0\nwatcher_kcp_requests_total 0\n",
		},
		{
			name:      "reviews of every decision are requests, unreadable ones errors",
			decisions: map[string]int{metrics.DecisionQueued: 4, metrics.DecisionUnchanged: 2, metrics.DecisionInvalid: 1, metrics.DecisionOverloaded: 3},
			want: "watcher_admission_request_error_total 1\nwatcher_admission_request_total 10\n" +
				"watcher_failed_kcp_total{error_reason=\"failed-request\"} 0\nwatcher_kcp_requests_total 0\n",
		},
		{
			name:      "every delivery attempt is a request to the KCP; changes dropped without one are not",
			forwarded: 5,
			failed: map[string]int{metrics.ReasonTransport: 1, metrics.ReasonServerError: 2, metrics.ReasonThrottled: 1,
				metrics.ReasonUnauthorized: 1, metrics.ReasonRejected: 1, metrics.ReasonOverflow: 7, metrics.ReasonShutdown: 3},
			want: "watcher_admission_request_error_total 0\nwatcher_admission_request_total 0\n" +
				"watcher_failed_kcp_total{error_reason=\"failed-request\"} 6\nwatcher_kcp_requests_total 11\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := metrics.New(reg, func() int { return 0 })
			require.NoError(t, err)
			for decision, n := range tt.decisions {
				m.AdmissionRequests.WithLabelValues("UPDATE", decision).Add(float64(n))
			}
			m.EventsForwarded.Add(float64(tt.forwarded))
			for reason, n := range tt.failed {
				m.EventsFailed.WithLabelValues(reason).Add(float64(n))
			}
			assert.Equal(t, tt.want, publicCounters(t, reg))
		})
	}
}

func TestPublicRequestDurationIsTheLastReviews(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, func() int { return 0 })
	require.NoError(t, err)
	m.AdmissionDuration.Observe(0.5)
	m.AdmissionDuration.Observe(0.25)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(
		"# HELP watcher_request_duration Indicates average request handling duration (of the last admission review)\n"+
			"# TYPE watcher_request_duration gauge\n"+
			"watcher_request_duration 0.25\n"), "watcher_request_duration"))
	var h dto.Metric
	require.NoError(t, m.AdmissionDuration.Write(&h))
	assert.Equal(t, uint64(2), h.GetHistogram().GetSampleCount(), "our histogram has every observation")
}

func TestPublicFIPSMode(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := metrics.New(reg, func() int { return 0 })
	require.NoError(t, err)
	want := "0"
	switch {
	case fips140.Enforced():
		want = "2"
	case fips140.Enabled():
		want = "1"
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(
		"# HELP watcher_fips_mode current FIPS mode (0=off/1=on/2=only)\n# TYPE watcher_fips_mode gauge\nwatcher_fips_mode "+want+"\n"),
		"watcher_fips_mode"))
}

// publicCounters renders the public counters as "name{labels} value" lines, sorted by name.
func publicCounters(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var b strings.Builder
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "watcher_") || f.GetMetric()[0].GetCounter() == nil {
			continue
		}
		for _, s := range f.GetMetric() {
			b.WriteString(f.GetName())
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName()+"=\""+l.GetValue()+"\"")
			}
			if len(labels) > 0 {
				b.WriteString("{" + strings.Join(labels, ",") + "}")
			}
			b.WriteString(" " + strconv.FormatFloat(s.GetCounter().GetValue(), 'f', -1, 64) + "\n")
		}
	}
	return b.String()
}

// TestMigrationDocListsPublicMetrics keeps the migration guide's table of
// the public operator's metrics true to what this module registers:
// the agent's watcher_ names (not the listener's), both ways.
func TestMigrationDocListsPublicMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := metrics.New(reg, func() int { return 0 })
	require.NoError(t, err)
	doc, err := os.ReadFile("../../../docs/migration.md")
	require.NoError(t, err)
	problems, err := publicmetrics.Mismatches(doc, reg, func(name string) bool {
		return strings.HasPrefix(name, "watcher_") && !strings.HasPrefix(name, "watcher_listener_")
	})
	require.NoError(t, err)
	assert.Empty(t, problems)
}
