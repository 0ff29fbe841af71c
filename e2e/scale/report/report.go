package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/lifecycle-manager/e2e/scale/proc"
	"github.com/lifecycle-manager/e2e/scale/stats"
)

// Report is everything one run measured. Sections of phases that did not
// run stay nil.
type Report struct {
	Started  time.Time    `json:"started"`
	Finished time.Time    `json:"finished"`
	Machine  proc.Machine `json:"machine"`
	// Load is the machine's 1-minute load average at each phase's end:
	// other work on the machine shows here.
	Load map[string]float64 `json:"loadAverage1m"`
	// MachineCPU is how the machine's CPU time split during each phase:
	// busy, idle, waiting for disk I/O, stolen by the hypervisor.
	MachineCPU map[string]proc.CPUShares `json:"machineCpu,omitempty"`
	Config     Config                    `json:"config"`

	Bound *Bound `json:"bareClientBound,omitempty"`
	// FullBound is the bare client that also makes the runtime writes.
	FullBound   *Bound       `json:"fullBound,omitempty"`
	Convergence *Convergence `json:"convergence,omitempty"`
	Operator    Operator     `json:"operator"`
	Idle        *Idle        `json:"idle,omitempty"`
	Resync      *Resync      `json:"resyncWave,omitempty"`
	Push        *Push        `json:"push,omitempty"`
	Release     *Release     `json:"release,omitempty"`
	Targets     []Target     `json:"targets"`
	// Incomplete says why the run stopped early, with the phase.
	Incomplete string `json:"incomplete,omitempty"`
}

// Config is the size and shape of the run.
type Config struct {
	Kymas          int      `json:"kymas"`
	ModulesPerKyma int      `json:"modulesPerKyma"`
	RuntimeServers int      `json:"runtimeApiServers"`
	PushRuntimes   int      `json:"pushRuntimes"`
	PushEdits      int      `json:"pushEdits"`
	IdleWindow     Duration `json:"idleWindow"`
	ReleaseRate    float64  `json:"releaseRate"`
	ResyncInterval Duration `json:"resyncInterval"`
	OperatorArgs   []string `json:"operatorArgs"`
	// Shards is the number of operator instances (0: one, unsharded).
	Shards int `json:"shards,omitempty"`
}

// Bound is the bare client's time for the minimal writes.
type Bound struct {
	Manifests int `json:"manifests"`
	// Writes are the KCP writes, RuntimeWrites those to the runtime API
	// servers (full bound only).
	Writes          int     `json:"writes"`
	RuntimeWrites   int     `json:"runtimeWrites,omitempty"`
	Workers         int     `json:"workers"`
	Seconds         float64 `json:"seconds"`
	WritesPerSecond float64 `json:"writesPerSecond"`
	// Apply is set when the bound wrote with server-side apply instead of
	// create and update (--bound-apply).
	Apply bool `json:"apply,omitempty"`
	// Served is what the API servers answered and the CPU each program
	// used while the bound ran.
	Served *Served `json:"served,omitempty"`
	// Reads are the operator's runtime reads, repeated after the full
	// bound's writes by the same client.
	Reads *Reads `json:"reads,omitempty"`
}

// Reads prices the runtime reads the operator made: a bare client repeats
// them, per runtime and resource as many as the operator's convergence
// averaged, against the full bound's copies.
type Reads struct {
	PerRuntime map[string]int `json:"perRuntime"`
	Requests   int            `json:"requests"`
	Seconds    float64        `json:"seconds"`
	Served     *Served        `json:"served,omitempty"`
}

// Convergence is the way from the operator's start to every Kyma Ready.
type Convergence struct {
	// Seconds from the operator's start until every Kyma was Ready.
	Seconds    float64 `json:"seconds"`
	Ready      int     `json:"ready"`
	Manifests  int     `json:"manifests"`
	Reconciles float64 `json:"reconciles"`
	// ByController counts reconciles per controller.
	ByController        map[string]float64 `json:"reconcilesByController"`
	ReconcilesPerSecond float64            `json:"reconcilesPerSecond"`
	KCPRequests         float64            `json:"kcpRequests"`
	// KCPByMethod splits the KCP requests by HTTP method.
	KCPByMethod             map[string]float64 `json:"kcpRequestsByMethod"`
	KCPRequestsPerSecond    float64            `json:"kcpRequestsPerSecond"`
	KCPRequestsPerReconcile float64            `json:"kcpRequestsPerReconcile"`
	RuntimeRequests         float64            `json:"runtimeRequests"`
	CPUSeconds              float64            `json:"operatorCpuSeconds"`
	// ProjectedSeconds, when not every Kyma became Ready in time, is when
	// all would be at the rate of the run's second half.
	ProjectedSeconds float64 `json:"projectedSeconds,omitempty"`
	// RatioToBound is Seconds (or ProjectedSeconds) over the bare client's
	// seconds.
	RatioToBound float64 `json:"ratioToBound,omitempty"`
	// RatioToFullBound is the same over the full bound's seconds.
	RatioToFullBound float64 `json:"ratioToFullBound,omitempty"`
	// HalfReadySeconds is when half of the Kymas were Ready; HalfReadyShare
	// that as a share of Until: about 0.5 when Kymas become Ready steadily,
	// near 1 when most become Ready at the end.
	HalfReadySeconds float64 `json:"halfReadySeconds,omitempty"`
	HalfReadyShare   float64 `json:"halfReadyShare,omitempty"`
	Served           *Served `json:"served,omitempty"`
}

// Until is the time until every Kyma is Ready: measured, or projected when
// the run stopped before.
func (c *Convergence) Until() float64 {
	if c.ProjectedSeconds > 0 {
		return c.ProjectedSeconds
	}
	return c.Seconds
}

// Served is what the API servers answered during a phase, per
// "VERB resource" (from their apiserver_request_total): the KCP's, and
// the runtime servers' summed; and the CPU seconds each program of the
// run spent meanwhile (operator, API servers, etcd, agents, harness).
type Served struct {
	KCP        map[string]float64 `json:"kcp"`
	Runtime    map[string]float64 `json:"runtime"`
	CPUSeconds map[string]float64 `json:"cpuSecondsByProgram"`
}

// Operator is the operator process's memory.
type Operator struct {
	BaselineRSS int64 `json:"baselineRssBytes"`
	SteadyRSS   int64 `json:"steadyRssBytes"`
	PeakRSS     int64 `json:"peakRssBytes"`
	// RSSPerRuntime is (SteadyRSS - BaselineRSS) / Kymas.
	RSSPerRuntime int64 `json:"rssPerRuntimeBytes"`
	// Shards are the instances of a sharded run (--shards), in order; the
	// figures above are then those of the largest, what one pod must hold.
	Shards []Shard `json:"shards,omitempty"`
}

// Shard is one instance of a sharded run.
type Shard struct {
	Name string `json:"name"`
	// Kymas are the Ready Kymas labelled for the shard at the end of the
	// convergence.
	Kymas       int   `json:"kymas"`
	BaselineRSS int64 `json:"baselineRssBytes"`
	SteadyRSS   int64 `json:"steadyRssBytes"`
	PeakRSS     int64 `json:"peakRssBytes"`
	// RSSPerRuntime is (SteadyRSS - BaselineRSS) / Kymas.
	RSSPerRuntime int64 `json:"rssPerRuntimeBytes"`
	// ConvergenceCPUSeconds is the CPU time the shard spent converging.
	ConvergenceCPUSeconds float64 `json:"convergenceCpuSeconds"`
}

func (s Shard) String() string {
	return fmt.Sprintf("%d Kymas, RSS peak %s, steady %s, baseline %s, %s per runtime; %.0f CPU s converging",
		s.Kymas, Bytes(s.PeakRSS), Bytes(s.SteadyRSS), Bytes(s.BaselineRSS), Bytes(s.RSSPerRuntime), s.ConvergenceCPUSeconds)
}

// Idle is the operator's cost with everything Ready and nothing changing.
type Idle struct {
	Seconds     float64 `json:"seconds"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	CorePercent float64 `json:"corePercent"`
	Reconciles  float64 `json:"reconciles"`
	KCPRequests float64 `json:"kcpRequests"`
}

// Resync is one forced no-op reconcile of every Kyma and Manifest, the work
// the periodic resync does once per interval, and its cost spread over it.
type Resync struct {
	Objects    int     `json:"objects"`
	Reconciles float64 `json:"reconciles"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// AmortizedCorePercent is CPUSeconds over the resync interval.
	AmortizedCorePercent float64 `json:"amortizedCorePercent"`
	KCPWrites            float64 `json:"kcpWrites"`
	Served               *Served `json:"served,omitempty"`
}

// Push is the latency of runtime edits to the reconcile they cause.
type Push struct {
	Runtimes int `json:"runtimes"`
	// PublicRuntimes run agents that send the public body, without the
	// pre-write version.
	PublicRuntimes int `json:"publicRuntimes,omitempty"`
	// Idle: edits while everything is Ready; UnderLoad: during the release;
	// IdlePublic: idle edits in the runtimes whose agents send the public body.
	Idle       *stats.Latency `json:"idle,omitempty"`
	UnderLoad  *stats.Latency `json:"underLoad,omitempty"`
	IdlePublic *stats.Latency `json:"idlePublic,omitempty"`
	// ListenerToReconcileMs is the mean of the operator's own histogram of
	// the last hop, listener to reconcile start.
	ListenerToReconcileMs float64 `json:"listenerToReconcileMeanMs"`
	Lost                  int     `json:"lost"`
	// ListenerAnswers counts the listener's answers by HTTP code.
	ListenerAnswers map[string]float64 `json:"listenerAnswers,omitempty"`
	// Agents sums the counters of the real agents.
	Agents *AgentCounters `json:"agents,omitempty"`
	// Reads counts, per series (idle, load), the Kyma controller's reads of
	// pushed writes by outcome (fresh, caught_up, gave_up): a gave_up read
	// waited for the second look 500 ms later.
	Reads map[string]map[string]float64 `json:"reads,omitempty"`
	// InOperator is, per series, what the operator's metrics say of the
	// time its edits were made.
	InOperator map[string]*PushSeries `json:"inOperator,omitempty"`
}

// PushSeries splits a push series' latency by the operator's metrics:
// how long pushed reconciles waited to start, and how busy the Kyma
// controller's workers were meanwhile (with every worker busy, a pushed
// Kyma waits for one to finish, whatever its place in the queue).
type PushSeries struct {
	// EditWrite is how long the runtime's API server took to answer the
	// edits: before it stored one, the operator could not read it.
	EditWrite             *stats.Latency `json:"editWrite,omitempty"`
	PushedReconciles      float64        `json:"pushedReconciles"`
	ListenerToReconcileMs float64        `json:"listenerToReconcileMeanMs"`
	// KymaQueueWaitMs is the mean wait in the Kyma queue of all its items.
	KymaQueueWaitMs         float64 `json:"kymaQueueWaitMeanMs"`
	KymaReconcilesPerSecond float64 `json:"kymaReconcilesPerSecond"`
	KymaReconcileMs         float64 `json:"kymaReconcileMeanMs"`
	// KymaWorkersBusy is the share of the Kyma workers' time spent
	// reconciling: reconciles per second × mean duration ÷ workers.
	KymaWorkersBusy float64 `json:"kymaWorkersBusy"`
	// KCPMeanMs is the KCP API server's mean time per request of its main
	// writes ("PATCH kymas": the pushed edits' spec patches).
	KCPMeanMs map[string]float64 `json:"kcpMeanMs,omitempty"`
	// FanOutPace is the operator's fan-out pace when the series ended:
	// below 1 while its KCP writes were slower than its latency target.
	FanOutPace float64 `json:"fanOutPace,omitempty"`
	// SlowWrites is the share of the operator's writes, per kind of
	// server (KCP, runtime), that the fan-out governor timed as slower
	// than their target during the series.
	SlowWrites map[string]float64 `json:"slowWrites,omitempty"`
	// Seconds from the series' first edit to its last answer.
	Seconds float64 `json:"seconds,omitempty"`
	// Released counts the Kymas Ready on the released version when a
	// series during a release ended: how much release work ran beside it.
	Released int `json:"released,omitempty"`
	// Served is what the API servers answered and each program's CPU
	// while the series ran: what the edits competed with.
	Served *Served `json:"served,omitempty"`
}

// AgentCounters are the push path as the agents saw it.
type AgentCounters struct {
	Queued    float64            `json:"queued"`
	Forwarded float64            `json:"forwarded"`
	Coalesced float64            `json:"coalesced"`
	Retried   float64            `json:"retried"`
	Failed    map[string]float64 `json:"failedByReason,omitempty"`
	// Unreachable agents did not answer a scrape: not running, so the
	// edits of their runtimes cannot arrive.
	Unreachable int `json:"unreachable,omitempty"`
	// DeliveryMeanMs is the mean time from a change to the KCP's acceptance.
	DeliveryMeanMs float64 `json:"deliveryMeanMs"`
}

// Release is a new module version released to every Kyma of a channel.
type Release struct {
	Module string `json:"module"`
	Kymas  int    `json:"kymas"`
	// Rate is the most Kymas per second the release reaches (0: no cap);
	// the window is Kymas/Rate.
	Rate float64 `json:"rate,omitempty"`
	// Seconds until every Kyma had the new version and was Ready again.
	Seconds float64 `json:"seconds"`
	// FirstToLastUpdate spans the first to the last Manifest update.
	FirstToLastUpdate   float64 `json:"firstToLastUpdateSeconds"`
	PeakReconcilesPerS  float64 `json:"peakReconcilesPerSecond"`
	CPUSeconds          float64 `json:"operatorCpuSeconds"`
	ReconcilesPerSecond float64 `json:"reconcilesPerSecond"`
	Served              *Served `json:"served,omitempty"`
}

// Duration marshals as a Go duration string.
type Duration time.Duration

// MarshalJSON writes d as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// WriteJSON writes the report to path, indented.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the report %s: %w", path, err)
	}
	return nil
}

// String prints d as a Go duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Window is how long the rate spreads the release over; 0 without a rate.
func (r *Release) Window() float64 {
	if r.Rate <= 0 {
		return 0
	}
	return float64(r.Kymas) / r.Rate
}
