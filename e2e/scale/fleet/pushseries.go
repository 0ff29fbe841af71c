package fleet

import (
	"github.com/lifecycle-manager/e2e/scale/metrics"
	"github.com/lifecycle-manager/e2e/scale/report"
	"github.com/lifecycle-manager/e2e/scale/stats"
)

// The operator's own histograms that split a pushed edit's wait: the last
// hop of the push path, and what the Kyma controller's workers did while
// the edits of a series were made.
const (
	pushToReconcile = "lifecycle_manager_push_to_reconcile_seconds"
	reconcileTime   = "controller_runtime_reconcile_time_seconds"
	queueWait       = "workqueue_queue_duration_seconds"
	maxWorkers      = "controller_runtime_max_concurrent_reconciles"
	fanOutPace      = "lifecycle_manager_fan_out_pace"
	timedWrites     = "lifecycle_manager_fan_out_timed_writes_total"
)

// seriesInOperator is what the operator's metrics say of the time between
// two readings around one push series: whether pushed reconciles waited
// for a Kyma worker, and how busy the Kyma controller's workers were.
func seriesInOperator(before, after reading) *report.PushSeries {
	kyma := metrics.Labels{"controller": "kyma"}
	seconds := after.at.Sub(before.at).Seconds()
	meanMs := func(name string, sel metrics.Labels) float64 {
		n := after.snapshot.Sum(name, sel) - before.snapshot.Sum(name, sel)
		return 1000 * stats.Ratio(after.snapshot.HistogramSum(name, sel)-before.snapshot.HistogramSum(name, sel), n)
	}
	reconciles := after.snapshot.Sum(reconcileTime, kyma) - before.snapshot.Sum(reconcileTime, kyma)
	s := &report.PushSeries{
		PushedReconciles:        after.snapshot.Sum(pushToReconcile, nil) - before.snapshot.Sum(pushToReconcile, nil),
		ListenerToReconcileMs:   meanMs(pushToReconcile, nil),
		KymaReconcilesPerSecond: stats.Ratio(reconciles, seconds),
		KymaReconcileMs:         meanMs(reconcileTime, kyma),
		KymaQueueWaitMs:         meanMs(queueWait, metrics.Labels{"name": "kyma"}),
		FanOutPace:              after.snapshot.Sum(fanOutPace, nil),
		Seconds:                 seconds,
	}
	for _, servers := range []string{"KCP", "runtime"} {
		count := func(sel metrics.Labels) float64 {
			return after.snapshot.Sum(timedWrites, sel) - before.snapshot.Sum(timedWrites, sel)
		}
		if all := count(metrics.Labels{"servers": servers}); all > 0 {
			if s.SlowWrites == nil {
				s.SlowWrites = map[string]float64{}
			}
			s.SlowWrites[servers] = count(metrics.Labels{"servers": servers, "slow": "true"}) / all
		}
	}
	if workers := after.snapshot.Sum(maxWorkers, kyma); workers > 0 {
		s.KymaWorkersBusy = s.KymaReconcilesPerSecond * s.KymaReconcileMs / 1000 / workers
	}
	return s
}
