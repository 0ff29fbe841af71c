package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/scale/metrics"
)

const sample = `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="kyma",result="success"} 120
controller_runtime_reconcile_total{controller="kyma",result="requeue_after"} 30
controller_runtime_reconcile_total{controller="manifest",result="success"} 500
# HELP rest_client_requests_total Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 10
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 5
rest_client_requests_total{code="200",host="127.0.0.1:7000",method="PATCH"} 99
# HELP lifecycle_manager_push_to_reconcile_seconds push
# TYPE lifecycle_manager_push_to_reconcile_seconds histogram
lifecycle_manager_push_to_reconcile_seconds_bucket{le="0.1"} 3
lifecycle_manager_push_to_reconcile_seconds_bucket{le="+Inf"} 4
lifecycle_manager_push_to_reconcile_seconds_sum 0.5
lifecycle_manager_push_to_reconcile_seconds_count 4
`

func TestSums(t *testing.T) {
	s, err := metrics.Parse(strings.NewReader(sample))
	require.NoError(t, err)
	assert.InDelta(t, 650.0, s.Sum("controller_runtime_reconcile_total", nil), 1e-9)
	assert.InDelta(t, 150.0, s.Sum("controller_runtime_reconcile_total", metrics.Labels{"controller": "kyma"}), 1e-9)
	assert.InDelta(t, 15.0, s.Sum("rest_client_requests_total", metrics.Labels{"host": "127.0.0.1:6443"}), 1e-9)
	assert.InDelta(t, 0.0, s.Sum("rest_client_requests_total", metrics.Labels{"missing": "x"}), 1e-9)
	assert.InDelta(t, 0.0, s.Sum("no_such_metric", nil), 1e-9)
	assert.InDelta(t, 4.0, s.Sum("lifecycle_manager_push_to_reconcile_seconds", nil), 1e-9)
	assert.InDelta(t, 0.5, s.HistogramSum("lifecycle_manager_push_to_reconcile_seconds", nil), 1e-9)
	assert.Equal(t, map[string]float64{"kyma": 150, "manifest": 500}, s.By("controller_runtime_reconcile_total", "controller", nil))
}

func TestScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(sample))
	}))
	defer srv.Close()
	s, err := metrics.Scrape(t.Context(), srv.Client(), srv.URL+"/metrics")
	require.NoError(t, err)
	assert.InDelta(t, 650.0, s.Sum("controller_runtime_reconcile_total", nil), 1e-9)
	_, err = metrics.Scrape(t.Context(), srv.Client(), srv.URL+"/other")
	require.ErrorContains(t, err, "404")
	_, err = metrics.Parse(strings.NewReader("not { metrics"))
	require.Error(t, err)
}

func TestServedRequests(t *testing.T) {
	const served = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="resource",subresource="status",verb="APPLY",version="v1beta2"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="resource",subresource="status",verb="APPLY",version="v1beta2"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="secrets",scope="namespace",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} 40
`
	snap, err := metrics.Parse(strings.NewReader(served))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"APPLY kymas/status": 9, "POST secrets": 3}, snap.ServedRequests(),
		"codes summed, paths without a resource left out")
	assert.Empty(t, metrics.Snapshot{}.ServedRequests())
}

func TestServedDurations(t *testing.T) {
	const served = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="resource",subresource="",verb="PATCH",version="v1beta2",le="+Inf"} 4
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="resource",subresource="",verb="PATCH",version="v1beta2"} 0.8
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="resource",subresource="",verb="PATCH",version="v1beta2"} 4
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="namespace",subresource="",verb="PATCH",version="v1beta1",le="+Inf"} 1
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="namespace",subresource="",verb="PATCH",version="v1beta1"} 0.2
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="operator.kyma-project.io",resource="kymas",scope="namespace",subresource="",verb="PATCH",version="v1beta1"} 1
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="",scope="",subresource="/healthz",verb="GET",version="",le="+Inf"} 40
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} 9
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="",scope="",subresource="/healthz",verb="GET",version=""} 40
`
	snap, err := metrics.Parse(strings.NewReader(served))
	require.NoError(t, err)
	got := snap.ServedDurations()
	require.Len(t, got, 1, "paths without a resource left out")
	assert.InDelta(t, 5, got["PATCH kymas"].Count, 1e-9, "versions and scopes summed")
	assert.InDelta(t, 1.0, got["PATCH kymas"].Seconds, 1e-9)
	assert.Empty(t, metrics.Snapshot{}.ServedDurations())
}

// TestMergeAddsTheProcessesUp: two shards' counters, one family only in
// the second, sum as one process's would.
func TestMergeAddsTheProcessesUp(t *testing.T) {
	a, err := metrics.Parse(strings.NewReader(sample))
	require.NoError(t, err)
	b, err := metrics.Parse(strings.NewReader(sample + `# TYPE only_here counter
only_here 7
`))
	require.NoError(t, err)
	m := metrics.Merge(a, b)
	assert.InDelta(t, 1300.0, m.Sum("controller_runtime_reconcile_total", nil), 1e-9)
	assert.Equal(t, map[string]float64{"kyma": 300, "manifest": 1000},
		m.By("controller_runtime_reconcile_total", "controller", nil))
	assert.InDelta(t, 1.0, m.HistogramSum("lifecycle_manager_push_to_reconcile_seconds", nil), 1e-9)
	assert.InDelta(t, 7.0, m.Sum("only_here", nil), 1e-9)
	assert.InDelta(t, 650.0, a.Sum("controller_runtime_reconcile_total", nil), 1e-9, "the inputs are left as they were")
}
