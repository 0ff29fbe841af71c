package metrics_test

import (
	"os"
	"strings"
	"testing"

	"github.com/lifecycle-manager/api/publicmetrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/listener/internal/metrics"
)

func TestPublicNamesFollowOurs(t *testing.T) {
	type answer struct {
		manager, code string
		n             int
	}
	tests := []struct {
		name       string
		answers    []answer
		inFlight   int
		unverified []string // reasons
		want       map[string]float64
	}{
		{
			name: "nothing yet: every series is there at 0",
			want: map[string]float64{"requests_total": 0, "request_errors_total": 0, "exceeding_size_limit_requests_total": 0,
				"inflight_requests": 0, "failed_verification_requests_total": 0},
		},
		{
			name: "answers of every manager add up, all but 200 are errors",
			answers: []answer{
				{"klm", "200", 3}, {"other", "200", 1}, {"klm", "429", 2}, {"unknown", "404", 1}, {"klm", "413", 2},
			},
			inFlight:   2,
			unverified: []string{"denied_certificate", "no_runtime_id", "no_runtime_id"},
			want: map[string]float64{"requests_total": 9, "request_errors_total": 5, "exceeding_size_limit_requests_total": 2,
				"inflight_requests": 2, "failed_verification_requests_total": 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := metrics.New(reg)
			require.NoError(t, err)
			for _, a := range tt.answers {
				m.Requests.WithLabelValues(a.manager, a.code).Add(float64(a.n))
			}
			m.InFlight.Add(float64(tt.inFlight))
			for _, reason := range tt.unverified {
				m.VerificationFailures.WithLabelValues(reason).Inc()
			}
			got := map[string]float64{}
			families, err := reg.Gather()
			require.NoError(t, err)
			for _, f := range families {
				name, ok := strings.CutPrefix(f.GetName(), "watcher_listener_")
				if !ok || name == "request_duration" {
					continue
				}
				require.Len(t, f.GetMetric(), 1, name)
				s := f.GetMetric()[0]
				labels := map[string]string{}
				for _, l := range s.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				assert.Equal(t, metrics.PublicServerName, labels["server_name"], name)
				got[name] = s.GetCounter().GetValue() + s.GetGauge().GetValue()
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPublicRequestDurationIsTheLastRequests(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)
	m.Duration.WithLabelValues("klm").Observe(0.5)
	m.Duration.WithLabelValues("other").Observe(0.25)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(
		"# HELP watcher_listener_request_duration Indicates the latency of each request in seconds (of the last one)\n"+
			"# TYPE watcher_listener_request_duration gauge\n"+
			"watcher_listener_request_duration{server_name=\"listener\"} 0.25\n"), "watcher_listener_request_duration"))
	assert.Equal(t, 2, testutil.CollectAndCount(m.Duration.HistogramVec), "our histogram has every observation")
}

// TestMigrationDocListsPublicMetrics keeps the migration guide's table of
// the public operator's metrics true to what this module registers:
// the listener's watcher_listener_ names, both ways.
func TestMigrationDocListsPublicMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := metrics.New(reg)
	require.NoError(t, err)
	doc, err := os.ReadFile("../../../docs/migration.md")
	require.NoError(t, err)
	problems, err := publicmetrics.Mismatches(doc, reg, func(name string) bool { return strings.HasPrefix(name, "watcher_listener_") })
	require.NoError(t, err)
	assert.Empty(t, problems)
}
