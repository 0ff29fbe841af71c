package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/scale/proc"
	"github.com/lifecycle-manager/e2e/scale/report"
	"github.com/lifecycle-manager/e2e/scale/stats"
)

func measured() *report.Report {
	return &report.Report{
		Config: report.Config{Kymas: 1000, ModulesPerKyma: 5, RuntimeServers: 3, ResyncInterval: report.Duration(30 * time.Minute)},
		Load:   map[string]float64{"start": 0.5, "convergence": 2.1},
		MachineCPU: map[string]proc.CPUShares{
			"convergence": {Busy: 0.97, IOWait: 0.02, Steal: 0.01},
			"release":     {Busy: 0.6, Idle: 0.3, IOWait: 0.1},
		},
		Bound: &report.Bound{Writes: 15000, Seconds: 50, WritesPerSecond: 300, Workers: 16},
		FullBound: &report.Bound{Writes: 15000, RuntimeWrites: 40000, Seconds: 70, WritesPerSecond: 785, Workers: 16, Apply: true,
			Served: &report.Served{CPUSeconds: map[string]float64{"runtime API servers": 60, "KCP API server": 40}},
			Reads: &report.Reads{PerRuntime: map[string]int{"kymas": 7, "deployments": 15}, Requests: 22000, Seconds: 30,
				Served: &report.Served{CPUSeconds: map[string]float64{"etcd": 9, "runtime API servers": 21}}}},
		Convergence: &report.Convergence{
			Seconds: 90, Ready: 1000, RatioToBound: 1.8, RatioToFullBound: 1.29, Reconciles: 9000, ReconcilesPerSecond: 100,
			KCPRequests: 27000, KCPRequestsPerSecond: 300, KCPRequestsPerReconcile: 3,
			HalfReadySeconds: 45, HalfReadyShare: 0.5,
			Served: &report.Served{KCP: map[string]float64{
				"APPLY manifests": 5000, "APPLY manifests/status": 5000, "APPLY kymas/status": 1000, "PATCH kymas": 1000,
				"POST events": 1000, "GET secrets": 9000, "LIST kymas": 3,
			}},
		},
		Operator: report.Operator{PeakRSS: 700 << 20, SteadyRSS: 600 << 20, BaselineRSS: 60 << 20, RSSPerRuntime: 540 << 10},
		Idle:     &report.Idle{Seconds: 300, CPUSeconds: 3, CorePercent: 1},
		Resync:   &report.Resync{Objects: 6000, Reconciles: 6000, CPUSeconds: 36, AmortizedCorePercent: 2},
		Push: &report.Push{
			Idle:      &stats.Latency{Count: 200, P50: 40, P99: 120, Max: 400},
			UnderLoad: &stats.Latency{Count: 200, P50: 60, P99: 900, Max: 1500},
			Reads:     map[string]map[string]float64{"load": {"fresh": 180, "caught_up": 15, "gave_up": 5}},
			InOperator: map[string]*report.PushSeries{"load": {
				EditWrite:        &stats.Latency{Count: 200, P50: 12, P99: 80},
				PushedReconciles: 201, ListenerToReconcileMs: 3, KymaQueueWaitMs: 9,
				KymaReconcilesPerSecond: 22, KymaReconcileMs: 40, KymaWorkersBusy: 0.11,
				KCPMeanMs:  map[string]float64{"PATCH kymas": 12, "APPLY manifests/status": 30},
				FanOutPace: 0.25, Seconds: 100, Released: 420,
			}},
		},
		Release: &report.Release{Module: "scale-1", Kymas: 1000, Rate: 10, Seconds: 130, FirstToLastUpdate: 118},
	}
}

func TestJudgeMet(t *testing.T) {
	r := measured()
	r.Judge()
	require.Len(t, r.Targets, 9)
	for _, tg := range r.Targets {
		require.NotNil(t, tg.Met, tg.Name)
		assert.True(t, *tg.Met, "%s: %s", tg.Name, tg.Value)
	}
	assert.Contains(t, r.Targets[1].Value, "3.00%", "idle window plus the amortized resync")
	assert.Contains(t, r.Targets[2].Value, "900 ms (during the release)", "the worse p99 counts")
	assert.Contains(t, r.Targets[7].Value, "13000 writes = 0.87×", "reads are not writes")
	assert.Contains(t, r.Targets[8].Value, "1.29× the full bound (70 s for 15000 KCP + 40000 runtime writes)")
}

func TestIdleTargetDoesNotCountResyncsTwice(t *testing.T) {
	// After a convergence longer than the resync interval the idle window
	// already holds resyncs: 500 of them at the wave's 6 ms each are 3 of
	// its 9 CPU seconds, which the amortized wave counts again.
	r := measured()
	r.Idle = &report.Idle{Seconds: 300, CPUSeconds: 9, CorePercent: 3, Reconciles: 500}
	r.Judge()
	assert.Contains(t, r.Targets[1].Value, "4.00%", "2% base + 2% resync, not 3% + 2%")
	require.NotNil(t, r.Targets[1].Met)
	assert.True(t, *r.Targets[1].Met)
}

func TestJudgeNotMet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*report.Report)
		target int
	}{
		{"slow convergence", func(r *report.Report) { r.Convergence.RatioToBound = 2.5 }, 0},
		{"not converged, even if the projection looks fast", func(r *report.Report) {
			r.Convergence.Ready, r.Convergence.ProjectedSeconds, r.Convergence.RatioToBound = 400, 95, 1.9
		}, 0},
		{"busy when idle", func(r *report.Report) { r.Resync.AmortizedCorePercent = 4.5 }, 1},
		{"slow push", func(r *report.Report) { r.Push.UnderLoad.P99 = 1200 }, 2},
		{"lost edit", func(r *report.Report) { r.Push.Lost = 1 }, 2},
		{"slow idle push", func(r *report.Report) { r.Push.Idle.P99 = 300 }, 3},
		{"lost idle edit", func(r *report.Report) { r.Push.Lost = 1 }, 3},
		{"too much memory", func(r *report.Report) { r.Operator.PeakRSS = 5 << 30 }, 4},
		{"release at once", func(r *report.Report) { r.Release.FirstToLastUpdate = 3 }, 5},
		{"release faster than its rate", func(r *report.Report) { r.Release.Rate = 2 }, 5},
		{"Ready at the end", func(r *report.Report) { r.Convergence.HalfReadyShare = 0.9 }, 6},
		{"too many writes", func(r *report.Report) { r.Convergence.Served.KCP["APPLY kymas/status"] = 8000 }, 7},
		{"too many writes, against the full bound alone", func(r *report.Report) {
			r.Convergence.Served.KCP["APPLY kymas/status"], r.Bound = 8000, nil
		}, 7},
		{"slow against the full bound", func(r *report.Report) { r.Convergence.RatioToFullBound = 1.6 }, 8},
		{"not converged, against the full bound", func(r *report.Report) {
			r.Convergence.Ready, r.Convergence.ProjectedSeconds = 400, 95
		}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := measured()
			tc.change(r)
			r.Judge()
			got := r.Targets[tc.target]
			require.NotNil(t, got.Met)
			assert.False(t, *got.Met, got.Value)
		})
	}
}

func TestJudgeNotMeasured(t *testing.T) {
	r := &report.Report{}
	r.Judge()
	for _, tg := range r.Targets {
		assert.Nil(t, tg.Met, tg.Name)
		assert.Equal(t, "not measured", tg.Value)
	}
}

func TestTableAndJSON(t *testing.T) {
	r := measured()
	r.Judge()
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	out := buf.String()
	for _, want := range []string{
		"1000 Kymas × 5 modules", "90.0 s (1000 of 1000 Ready), 1.80× the bound",
		"p50 60 ms, p99 900 ms, max 1500 ms (200 edits)", "peak 700 MiB", "start 0.50, convergence 2.10",
		"target", "yes", "pushed reads (load): 180 fresh, 15 caught up, 5 gave up",
		"convergence 97/2.0/1.0%, release 60/10.0/0.0%",
		"full bound (with runtime writes), server-side apply", "100: runtime API servers 60, KCP API server 40",
		"edits stored (load) p50 12 ms, p99 80 ms; Kyma controller (load): pushed waited 3 ms (201), queue wait 9 ms, 22.0 reconciles/s of 40 ms, workers 11% busy, fan-out pace at the end 0.25, 420 Kymas on the new version after 100 s; KCP API server mean (load): APPLY manifests/status 30 ms, PATCH kymas 12 ms",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "NO")

	path := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, r.WriteJSON(path))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var back report.Report
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, r.Config, back.Config)
	assert.Equal(t, r.Push.UnderLoad, back.Push.UnderLoad)
	assert.Equal(t, r.Push.Reads, back.Push.Reads)
	assert.Contains(t, string(raw), `"rate": 10`)
}

func TestTableOfAnUnfinishedRun(t *testing.T) {
	r := measured()
	r.Convergence.Seconds, r.Convergence.Ready, r.Convergence.ProjectedSeconds, r.Convergence.RatioToBound = 300, 400, 600, 12
	r.Judge()
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	assert.Contains(t, buf.String(), "not reached: 400 of 1000 Ready after 300 s; all by ~600 s at the second half's rate, ~12.0× the bound")
	assert.Contains(t, buf.String(), "projected 600 s = 12.0× the bound (50 s)")
}

func TestBytes(t *testing.T) {
	assert.Equal(t, "512 KiB", report.Bytes(512<<10))
	assert.Equal(t, "300 MiB", report.Bytes(300<<20))
	assert.Equal(t, "1.50 GiB", report.Bytes(3<<29))
}

func TestTopServed(t *testing.T) {
	counts := map[string]float64{"GET secrets": 5, "APPLY kymas/status": 9, "POST events": 5, "LIST kymas": 1}
	assert.Equal(t, "20: APPLY kymas/status 9, GET secrets 5, POST events 5", report.TopServed(counts, 3),
		"total first, then largest first, ties by name")
	assert.Equal(t, "0: ", report.TopServed(nil, 3))
}

// TestTableOfARunWithoutTheBound: --bound-workers=0 measures no bound, so
// the table names no ratio to it.
func TestTableOfARunWithoutTheBound(t *testing.T) {
	r := measured()
	r.Bound, r.Convergence.RatioToBound = nil, 0
	r.Judge()
	var buf bytes.Buffer
	require.NoError(t, r.WriteTable(&buf))
	assert.Contains(t, buf.String(), "90.0 s (1000 of 1000 Ready)\n")
	assert.NotContains(t, buf.String(), "× the bound\n")
}
