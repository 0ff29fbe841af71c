package fleet

import (
	"errors"
	"fmt"
	"time"

	"github.com/lifecycle-manager/e2e/scale/report"
)

// Options size and shape a run.
type Options struct {
	// Kymas is the number of runtimes (default 1,000).
	Kymas int
	// Modules per Kyma (default 5).
	Modules int
	// RuntimeServers is the number of runtime API servers; 0 picks
	// N/1,000+1, from 2 to MaxRuntimeServers.
	RuntimeServers int
	// PushRuntimes run a real agent; PushEdits are made in them twice (idle
	// and during the release) at EditRate per second.
	PushRuntimes int
	PushEdits    int
	EditRate     float64
	// PublicPushRuntimes run a real agent too (after the PushRuntimes),
	// one that sends the public runtime-watcher body (no pre-write version):
	// PushEdits more edits are made in them while idle, measured apart.
	PublicPushRuntimes int
	// Idle is the quiet window with everything Ready.
	Idle time.Duration
	// Release releases a new version of one module to every Kyma, at
	// the operator's --fan-out-rate.
	Release bool
	// ReleaseRate is the operator's --fan-out-rate: the release reaches at
	// most this many Kymas per second. 0: no limit.
	ReleaseRate float64
	// ReleasePushOnly ends the release phase when the push edits made
	// during it are measured, without waiting for every Kyma to run the
	// new version: at 10,000 Kymas and 5 per second that is 33 minutes.
	ReleasePushOnly bool
	// ResyncWave forces one no-op reconcile of every Kyma and Manifest.
	ResyncWave bool
	// ResyncInterval is the operator's --requeue-success, which the wave's
	// cost is spread over.
	ResyncInterval time.Duration
	// BoundWorkers is the bare client's concurrency; 0 skips the bound.
	BoundWorkers int
	// OnlyFullBound skips the KCP-only bound: at 10,000 Kymas it and the
	// deletion of its 50,000 Manifests take a quarter of an hour.
	OnlyFullBound bool
	// BoundOnly measures the bounds on their own: the operator runs only
	// until one Kyma is Ready (the model the bounds copy) and is stopped;
	// nothing of the bounds is deleted afterwards. At 10,000 Kymas the full
	// bound beside the operator's fleet does not fit 24 GiB.
	BoundOnly bool
	// BoundApply makes the bounds write with server-side apply, as the
	// operator does, instead of create and update.
	BoundApply bool
	// ReadyTimeout bounds the wait for every Kyma to be Ready.
	ReadyTimeout time.Duration
	// ProfileSeconds of CPU profile taken at the start of the convergence,
	// of the full bound, of the resync wave and of the release (0: none).
	ProfileSeconds int
	// ProfileConvergenceAfter delays the convergence profile and the full
	// bound's, so that a long run is profiled in its steady middle rather
	// than its start.
	ProfileConvergenceAfter time.Duration
	// RunDir holds binaries, kubeconfigs and logs; OutDir the report and
	// plots.
	RunDir, OutDir string
	// Shards runs this many operator instances, --shard=s0 to s<n-1>,
	// over one shard list: s0 assigns the Kymas, which are created without
	// the shard label. 0 or 1: one unsharded operator. A sharded run
	// measures the convergence, the bound and the idle window only.
	Shards int
	// OperatorArgs are added to the operator's flags (tuning experiments).
	OperatorArgs []string
	// Progress receives one line per step.
	Progress func(format string, args ...any)
	// Checkpoint receives the report, judged, after each phase that
	// completed: a run that is stopped later (at 10,000 Kymas the full
	// bound can run the machine out of memory) keeps what it measured.
	Checkpoint func(*report.Report) error
}

// MaxRuntimeServers keeps the run at eight API servers with the KCP.
const MaxRuntimeServers = 7

// Namespace is the operator's namespace in the KCP.
const Namespace = "kcp-system"

// Defaults fills unset options.
func (o *Options) Defaults() {
	if o.Kymas == 0 {
		o.Kymas = 1000
	}
	if o.Modules == 0 {
		o.Modules = 5
	}
	if o.RuntimeServers == 0 {
		o.RuntimeServers = min(max(o.Kymas/1000+1, 2), MaxRuntimeServers)
	}
	if o.EditRate == 0 {
		o.EditRate = 4
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = 2 * time.Hour
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 3 * time.Hour
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
}

// Validate rejects sizes the machine or the method cannot take.
func (o *Options) Validate() error {
	var errs []error
	if o.Kymas < 1 {
		errs = append(errs, fmt.Errorf("kymas %d: want at least 1", o.Kymas))
	}
	if o.Modules < 1 || o.Modules > MaxModules {
		errs = append(errs, fmt.Errorf("modules %d: want 1 to %d", o.Modules, MaxModules))
	}
	if o.RuntimeServers < 1 || o.RuntimeServers > MaxRuntimeServers {
		errs = append(errs, fmt.Errorf("runtime servers %d: want 1 to %d (eight API servers with the KCP)", o.RuntimeServers, MaxRuntimeServers))
	}
	if o.PushRuntimes < 0 || o.PublicPushRuntimes < 0 || o.PushRuntimes+o.PublicPushRuntimes > o.Kymas {
		errs = append(errs, fmt.Errorf("push runtimes %d and public push runtimes %d: want 0 or more, together at most the number of Kymas",
			o.PushRuntimes, o.PublicPushRuntimes))
	}
	if o.PushEdits > 0 && o.PushRuntimes == 0 && o.PublicPushRuntimes == 0 {
		errs = append(errs, errors.New("push edits need at least one push runtime"))
	}
	if o.EditRate <= 0 {
		errs = append(errs, fmt.Errorf("edit rate %v: want more than 0", o.EditRate))
	}
	if o.BoundOnly && o.BoundWorkers == 0 {
		errs = append(errs, errors.New("bound only: the bound needs at least one worker"))
	}
	errs = append(errs, o.validateShards()...)
	if o.RunDir == "" || o.OutDir == "" {
		errs = append(errs, errors.New("run and output folders are required"))
	}
	return errors.Join(errs...)
}

// MaxShards keeps a sharded run's processes within one machine's reach.
const MaxShards = 8

func (o *Options) validateShards() []error {
	if o.Shards < 0 || o.Shards > MaxShards {
		return []error{fmt.Errorf("shards %d: want 0 to %d", o.Shards, MaxShards)}
	}
	if o.Shards <= 1 {
		return nil
	}
	var errs []error
	for _, c := range []struct {
		what string
		set  bool
	}{
		{"push runtimes", o.PushRuntimes+o.PublicPushRuntimes > 0}, {"the release", o.Release},
		{"the resync wave", o.ResyncWave}, {"profiles", o.ProfileSeconds > 0}, {"bound only", o.BoundOnly},
	} {
		if c.set {
			errs = append(errs, fmt.Errorf("shards %d: %s: measured with one operator only", o.Shards, c.what))
		}
	}
	return errs
}
