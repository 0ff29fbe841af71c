package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/scale/metrics"
)

// operatorMetrics is an operator's exposition with the histograms
// seriesInOperator reads, each with one sample count and sum.
func operatorMetrics(t *testing.T, pushed int, pushedSum float64, reconciles int, reconcileSum float64, queued int, queueSum float64) metrics.Snapshot {
	t.Helper()
	text := fmt.Sprintf(`# TYPE lifecycle_manager_push_to_reconcile_seconds histogram
lifecycle_manager_push_to_reconcile_seconds_bucket{le="+Inf"} %[1]d
lifecycle_manager_push_to_reconcile_seconds_sum %[2]g
lifecycle_manager_push_to_reconcile_seconds_count %[1]d
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="kyma",le="+Inf"} %[3]d
controller_runtime_reconcile_time_seconds_sum{controller="kyma"} %[4]g
controller_runtime_reconcile_time_seconds_count{controller="kyma"} %[3]d
controller_runtime_reconcile_time_seconds_bucket{controller="manifest",le="+Inf"} 1000
controller_runtime_reconcile_time_seconds_sum{controller="manifest"} 999
controller_runtime_reconcile_time_seconds_count{controller="manifest"} 1000
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="kyma",le="+Inf"} %[5]d
workqueue_queue_duration_seconds_sum{name="kyma"} %[6]g
workqueue_queue_duration_seconds_count{name="kyma"} %[5]d
# TYPE controller_runtime_max_concurrent_reconciles gauge
controller_runtime_max_concurrent_reconciles{controller="kyma"} 8
controller_runtime_max_concurrent_reconciles{controller="manifest"} 16
`, pushed, pushedSum, reconciles, reconcileSum, queued, queueSum)
	s, err := metrics.Parse(strings.NewReader(text))
	require.NoError(t, err)
	return s
}

func TestSeriesInOperator(t *testing.T) {
	start := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	before := reading{at: start, snapshot: operatorMetrics(t, 10, 0.5, 100, 20, 150, 3)}
	// 10 s later: 20 more pushed reconciles that waited 4 s in all, 40
	// Kyma reconciles of 16 s in all, 50 queue waits of 5 s in all.
	after := reading{at: start.Add(10 * time.Second), snapshot: operatorMetrics(t, 30, 4.5, 140, 36, 200, 8)}

	got := seriesInOperator(before, after)

	assert.InDelta(t, 20, got.PushedReconciles, 1e-9)
	assert.InDelta(t, 200, got.ListenerToReconcileMs, 1e-9, "4 s over 20 pushed reconciles")
	assert.InDelta(t, 4, got.KymaReconcilesPerSecond, 1e-9, "the Manifest controller's reconciles are not counted")
	assert.InDelta(t, 400, got.KymaReconcileMs, 1e-9)
	assert.InDelta(t, 100, got.KymaQueueWaitMs, 1e-9)
	assert.InDelta(t, 0.2, got.KymaWorkersBusy, 1e-9, "4 reconciles/s × 0.4 s over 8 workers")
}

func TestKCPMeanMs(t *testing.T) {
	before := map[string]metrics.Durations{"PATCH kymas": {Count: 10, Seconds: 1}, "APPLY manifests": {Count: 5, Seconds: 1}}
	after := map[string]metrics.Durations{"PATCH kymas": {Count: 30, Seconds: 5}, "APPLY manifests": {Count: 5, Seconds: 1},
		"APPLY kymas/status": {Count: 4, Seconds: 0.2}, "GET secrets": {Count: 100, Seconds: 1}}

	got := kcpMeanMs(before, after)

	assert.Equal(t, map[string]float64{"PATCH kymas": 200, "APPLY kymas/status": 50}, got,
		"4 s over 20 patches; kinds not answered in between and kinds not watched are left out")
}
