package promtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dashboard check against a real Prometheus scraping a fake exporter:
// the panel of a metric that is exported passes, the panel of one that is
// not fails by name, and so does a query that does not parse.
func TestDashboardCheckNamesTheEmptyPanel(t *testing.T) {
	bin, err := Binaries(t.Context(), "../..")
	require.NoError(t, err)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "# TYPE demo_requests_total counter\ndemo_requests_total{code=\"200\"} 7")
	}))
	defer exporter.Close()
	host, port, err := net.SplitHostPort(exporter.Listener.Addr().String())
	require.NoError(t, err)

	started := time.Now()
	s, err := Start(t.Context(), Options{
		BinDir: bin, Dir: t.TempDir(),
		Jobs:  []Job{{Name: "demo", Interval: 200 * time.Millisecond, Timeout: 200 * time.Millisecond, Targets: []string{net.JoinHostPort(host, port)}}},
		Rules: []byte("groups:\n- name: demo\n  rules:\n  - alert: DemoErrors\n    expr: sum(rate(demo_requests_total{code=\"500\"}[1m])) > 0\n"),
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Stop()) }()
	c := &Client{URL: s.URL}
	require.Eventually(t, func() bool {
		// Two samples, so that rate() has a value.
		series, err := c.Query(t.Context(), `rate(demo_requests_total[1m])`, time.Now())
		return err == nil && len(series) == 1
	}, 30*time.Second, 100*time.Millisecond)

	d, err := ParseDashboard([]byte(`{
	  "templating": {"list": [{"name": "job", "type": "query", "query": {"query": "label_values(demo_requests_total, job)"}}]},
	  "panels": [
	    {"type": "row", "title": "A row"},
	    {"type": "timeseries", "title": "Requests", "targets": [{"expr": "sum by (code) (rate(demo_requests_total{job=~\"$job\"}[$__rate_interval]))"}]},
	    {"type": "timeseries", "title": "Errors", "targets": [{"expr": "sum(rate(demo_errors_total{job=~\"${job}\"}[5m]))"}]},
	    {"type": "stat", "title": "Broken", "targets": [{"expr": "sum(demo_requests_total"}]},
	    {"type": "stat", "title": "Unknown variable", "targets": [{"expr": "demo_requests_total{code=\"$code\"}"}]}
	  ]}`))
	require.NoError(t, err)
	problems, err := d.Check(t.Context(), c, started, time.Now())
	require.NoError(t, err)
	require.Len(t, problems, 3, "%q", problems)
	assert.Contains(t, problems[0], `panel "Errors" shows nothing`)
	assert.Contains(t, problems[1], `panel "Broken"`)
	assert.Contains(t, problems[1], "bad_data")
	assert.Contains(t, problems[2], `panel "Unknown variable"`)

	require.Eventually(t, func() bool {
		groups, err := c.Rules(t.Context())
		return err == nil && len(groups) == 1 && len(groups[0].Rules) == 1 &&
			groups[0].Rules[0].Health == "ok" && groups[0].Rules[0].LastEvaluation.After(started)
	}, 30*time.Second, 100*time.Millisecond, "the rule evaluates")
}
