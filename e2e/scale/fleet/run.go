package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lifecycle-manager/e2e/scale/metrics"
	"github.com/lifecycle-manager/e2e/scale/plot"
	"github.com/lifecycle-manager/e2e/scale/proc"
	"github.com/lifecycle-manager/e2e/scale/report"
	"github.com/lifecycle-manager/e2e/scale/stats"
)

// run is one experiment in progress.
type run struct {
	f       *Fleet
	opts    Options
	r       *report.Report
	ports   []int
	ready   series
	release series
	push    map[string][]Edit
}

// Run performs the experiment. The report is returned even when a phase
// failed: Incomplete then names the phase and the error is returned too.
func Run(ctx context.Context, opts Options) (*report.Report, error) {
	opts.Defaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ru := &run{opts: opts, push: map[string][]Edit{}, r: &report.Report{
		Started: time.Now(), Machine: proc.Default.Machine(), Load: map[string]float64{}, MachineCPU: map[string]proc.CPUShares{},
		Config: report.Config{Kymas: opts.Kymas, ModulesPerKyma: opts.Modules, RuntimeServers: opts.RuntimeServers,
			PushRuntimes: opts.PushRuntimes, PushEdits: opts.PushEdits, IdleWindow: report.Duration(opts.Idle),
			ReleaseRate: opts.ReleaseRate, ResyncInterval: report.Duration(opts.ResyncInterval),
			OperatorArgs: opts.OperatorArgs, Shards: opts.Shards},
	}}
	err := ru.phases(ctx)
	ru.r.Finished = time.Now()
	ru.r.Judge()
	if perr := ru.plots(); perr != nil && err == nil {
		err = perr
	}
	return ru.r, err
}

type phase struct {
	name string
	fn   func(context.Context) error
}

func (ru *run) steps() []phase {
	if ru.opts.BoundOnly {
		return []phase{{"setup", ru.setup}, {"model", ru.model}, {"bound", ru.bound}}
	}
	o := ru.opts
	all := []struct {
		phase
		on bool
	}{
		{phase{"setup", ru.setup}, true}, {phase{"convergence", ru.converge}, true},
		{phase{"bound", ru.bound}, o.BoundWorkers > 0}, {phase{"idle", ru.idle}, o.Idle > 0},
		{phase{"resync", ru.resyncWave}, o.ResyncWave}, {phase{"push", ru.pushIdle}, o.PushEdits > 0},
		{phase{"release", ru.releasePhase}, o.Release},
	}
	// A phase left out is not run, and reports no load average.
	var steps []phase
	for _, p := range all {
		if p.on {
			steps = append(steps, p.phase)
		}
	}
	return steps
}

// lastPhase names the run's last phase.
func (ru *run) lastPhase() string {
	steps := ru.steps()
	return steps[len(steps)-1].name
}

func (ru *run) phases(ctx context.Context) error {
	steps := ru.steps()
	defer func() {
		if ru.f != nil {
			ru.f.Close()
		}
	}()
	for _, s := range steps {
		ru.opts.Progress("phase %s", s.name)
		cpuBefore, cpuErr := proc.Default.MachineCPU()
		if err := s.fn(ctx); err != nil {
			ru.r.Incomplete = fmt.Sprintf("%s: %v", s.name, err)
			err = fmt.Errorf("phase %s: %w", s.name, err)
			if s.name == "convergence" && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = errors.Join(err, ru.boundAfterTimeout(ctx))
			}
			return err
		}
		if load, err := proc.Default.LoadAverage(); err == nil {
			ru.r.Load[s.name] = load[0]
		}
		if cpuAfter, err := proc.Default.MachineCPU(); err == nil && cpuErr == nil {
			ru.r.MachineCPU[s.name] = cpuBefore.SharesUntil(cpuAfter)
		}
		if err := ru.checkpoint(); err != nil {
			return err
		}
	}
	return nil
}

func (ru *run) checkpoint() error {
	if ru.opts.Checkpoint == nil {
		return nil
	}
	ru.r.Judge()
	if err := ru.opts.Checkpoint(ru.r); err != nil {
		return fmt.Errorf("saving the report so far: %w", err)
	}
	return nil
}

func (ru *run) setup(ctx context.Context) error {
	f, err := Start(ctx, ru.opts)
	if err != nil {
		return err
	}
	ru.f = f
	ru.opts.Progress("publishing %d modules with modulectl to %s", ru.opts.Modules, f.Registry)
	if err := f.PublishModules(ctx); err != nil {
		return err
	}
	if ru.ports, err = AllocateAgentPorts(ctx, ru.opts.PushRuntimes+ru.opts.PublicPushRuntimes); err != nil {
		return err
	}
	ru.opts.Progress("creating %d Kymas and their access Secrets", ru.opts.Kymas)
	if err := f.CreateKymas(ctx, ru.ports); err != nil {
		return err
	}
	f.RunKubelet()
	f.RunAgents(ru.ports)
	return nil
}

func (ru *run) converge(ctx context.Context) error {
	f := ru.f
	servedBefore, err := f.readServed(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := f.StartOperator(ctx); err != nil {
		return err
	}
	base, err := f.read(ctx)
	if err != nil {
		return err
	}
	ru.r.Operator.BaselineRSS = base.usage.RSS
	f.profileCPU(ctx, "cpu-convergence.pprof", ru.opts.ProfileConvergenceAfter)
	wait, cancel := context.WithTimeout(ctx, ru.opts.ReadyTimeout)
	defer cancel()
	err = f.watchProgress(wait, start, &ru.ready, "", func(c Census) bool { return c.Ready == ru.opts.Kymas })
	// An interrupted or timed-out run still reports how far it came.
	last, cancelLast := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancelLast()
	end, rerr := f.read(last)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	seconds := end.at.Sub(start).Seconds()
	conv := &report.Convergence{Seconds: seconds, Manifests: ru.opts.Kymas * ru.opts.Modules,
		Reconciles: end.total(), ByController: end.reconciles, ReconcilesPerSecond: end.total() / seconds,
		KCPRequests: end.kcp(), KCPByMethod: end.kcpMethods, KCPRequestsPerSecond: end.kcp() / seconds,
		RuntimeRequests: end.runtime, CPUSeconds: end.usage.CPUSeconds}
	conv.KCPRequestsPerReconcile = stats.Ratio(conv.KCPRequests, conv.Reconciles)
	if servedAfter, serr := f.readServed(last); serr == nil {
		conv.Served = servedSince(servedBefore, servedAfter)
	}
	if last := ru.ready.ready; len(last) > 0 {
		conv.Ready = int(last[len(last)-1].Y)
		if err != nil {
			conv.ProjectedSeconds = projectReady(last, ru.opts.Kymas)
		}
		conv.HalfReadySeconds = readyAt(last, float64(ru.opts.Kymas)/2)
		if conv.HalfReadySeconds > 0 && conv.Until() > 0 {
			conv.HalfReadyShare = conv.HalfReadySeconds / conv.Until()
		}
	}
	ru.r.Convergence = conv
	ru.r.Operator.PeakRSS = max(ru.ready.peakRSS, end.usage.PeakRSS)
	if census, cerr := f.Count(last, ""); cerr == nil {
		ru.shardsConverged(base, end, census)
	}
	if err != nil {
		return fmt.Errorf("waiting for every Kyma to be Ready (%d of %d): %w", conv.Ready, ru.opts.Kymas, err)
	}
	ru.opts.Progress("all %d Kymas Ready after %.0f s", ru.opts.Kymas, seconds)
	return nil
}

// model runs the operator until a first Kyma is Ready, the model the
// bounds copy, and stops it (--bound-only).
func (ru *run) model(ctx context.Context) error {
	start := time.Now()
	if err := ru.f.StartOperator(ctx); err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, ru.opts.ReadyTimeout)
	defer cancel()
	if err := ru.f.watchProgress(wait, start, &ru.ready, "", func(c Census) bool { return c.Ready > 0 }); err != nil {
		return fmt.Errorf("waiting for a first Ready Kyma: %w", err)
	}
	ru.opts.Progress("a Kyma is Ready after %.0f s; stopping the operator to measure the bound alone", time.Since(start).Seconds())
	if err := ru.f.StopOperators(); err != nil {
		return err
	}
	return nil
}

func (ru *run) bound(ctx context.Context) error {
	ru.f.boundEndsRun = ru.lastPhase() == "bound"
	if !ru.opts.OnlyFullBound {
		b, err := ru.f.MeasureBound(ctx, ru.opts.BoundWorkers, false, nil)
		if err != nil {
			return err
		}
		ru.r.Bound = b
		ru.opts.Progress("bare client: %d writes in %.1f s (%.0f/s)", b.Writes, b.Seconds, b.WritesPerSecond)
		if c := ru.r.Convergence; c != nil {
			c.RatioToBound = stats.Ratio(c.Until(), b.Seconds)
			ru.opts.Progress("the operator took %.1f× that", c.RatioToBound)
		}
	}
	var operatorReads map[string]float64
	if c := ru.r.Convergence; c != nil && c.Served != nil {
		operatorReads = c.Served.Runtime
	}
	profile, stopProfile := context.WithCancel(ctx)
	defer stopProfile()
	ru.f.profileCPU(profile, "cpu-bound.pprof", ru.opts.ProfileConvergenceAfter)
	full, err := ru.f.MeasureBound(ctx, ru.opts.BoundWorkers, true, operatorReads)
	if err != nil {
		return fmt.Errorf("the full bound: %w", err)
	}
	ru.r.FullBound = full
	ru.opts.Progress("bare client with the runtime writes: %d + %d writes in %.1f s", full.Writes, full.RuntimeWrites, full.Seconds)
	if c := ru.r.Convergence; c != nil {
		c.RatioToFullBound = stats.Ratio(c.Until(), full.Seconds)
		ru.opts.Progress("the operator took %.1f× that", c.RatioToFullBound)
	}
	return nil
}

// boundAfterTimeout still measures the bound when the operator ran out of
// --ready-timeout, so that a run too long for its budget reports its
// projected ratio. The operator is stopped first: the bound must not share
// the machine with its unfinished work.
func (ru *run) boundAfterTimeout(ctx context.Context) error {
	if ru.opts.BoundWorkers == 0 || ru.r.Convergence == nil || ru.r.Convergence.Ready == 0 || ru.f.Operator == nil {
		return nil
	}
	ru.opts.Progress("stopping the operator to measure the bare-client bound of the unfinished run")
	if err := ru.f.StopOperators(); err != nil {
		return err
	}
	if err := ru.bound(ctx); err != nil {
		return fmt.Errorf("phase bound: %w", err)
	}
	return nil
}

func projectReady(ready []plot.XY, total int) float64 {
	xs, ys := split(ready)
	return stats.Project(xs, ys, float64(total))
}

// readyAt is when the Ready count first reached n.
func readyAt(ready []plot.XY, n float64) float64 {
	xs, ys := split(ready)
	return stats.Reached(xs, ys, n)
}

func split(points []plot.XY) (xs, ys []float64) {
	xs, ys = make([]float64, len(points)), make([]float64, len(points))
	for i, p := range points {
		xs[i], ys[i] = p.X, p.Y
	}
	return xs, ys
}

func (ru *run) idle(ctx context.Context) error {
	ru.opts.Progress("idle for %s with everything Ready", ru.opts.Idle)
	a, err := ru.f.read(ctx)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(ru.opts.Idle):
	}
	b, err := ru.f.read(ctx)
	if err != nil {
		return err
	}
	seconds := b.at.Sub(a.at).Seconds()
	cpu := b.usage.CPUSeconds - a.usage.CPUSeconds
	ru.r.Idle = &report.Idle{Seconds: seconds, CPUSeconds: cpu, CorePercent: 100 * cpu / seconds,
		Reconciles: b.total() - a.total(), KCPRequests: b.kcp() - a.kcp()}
	ru.r.Operator.SteadyRSS = b.usage.RSS
	ru.r.Operator.PeakRSS = max(ru.r.Operator.PeakRSS, b.usage.PeakRSS)
	ru.r.Operator.RSSPerRuntime = (b.usage.RSS - ru.r.Operator.BaselineRSS) / int64(ru.opts.Kymas)
	ru.shardsIdle(b)
	return nil
}

func (ru *run) pushIdle(ctx context.Context) error {
	ru.r.Push = &report.Push{Runtimes: ru.opts.PushRuntimes, PublicRuntimes: ru.opts.PublicPushRuntimes,
		Reads: map[string]map[string]float64{}, InOperator: map[string]*report.PushSeries{}}
	if n := ru.opts.PushRuntimes; n > 0 {
		ru.opts.Progress("%d runtime edits at %.0f/s in %d runtimes with agents", ru.opts.PushEdits, ru.opts.EditRate, n)
		edits, lost, err := ru.editSeries(ctx, 0, n, "idle")
		if err != nil {
			return err
		}
		ru.push["idle"] = edits
		ru.r.Push.Idle, ru.r.Push.Lost = summarize(edits), lost
	}
	if n := ru.opts.PublicPushRuntimes; n > 0 {
		ru.opts.Progress("%d runtime edits at %.0f/s in %d runtimes whose agents send the public body", ru.opts.PushEdits, ru.opts.EditRate, n)
		first := ru.opts.PushRuntimes
		edits, lost, err := ru.f.PushEdits(ctx, first, first+n, ru.opts.PushEdits, ru.opts.EditRate, "idle-public")
		if err != nil {
			return err
		}
		ru.push["idle, public body"] = edits
		ru.r.Push.IdlePublic, ru.r.Push.Lost = summarize(edits), ru.r.Push.Lost+lost
	}
	return ru.listenerToReconcile(ctx)
}

func (ru *run) listenerToReconcile(ctx context.Context) error {
	now, err := ru.f.read(ctx)
	if err != nil {
		return err
	}
	const h = "lifecycle_manager_push_to_reconcile_seconds"
	ru.r.Push.ListenerToReconcileMs = 1000 * stats.Ratio(now.snapshot.HistogramSum(h, nil), now.snapshot.Sum(h, nil))
	ru.r.Push.ListenerAnswers = now.snapshot.By("listener_requests_total", "code", nil)
	ru.r.Push.Agents = ru.f.agentCounters(ctx)
	return nil
}

// editSeries makes the push edits of one series in the runtimes with our
// agent, and counts how the Kyma controller's reads of them ended.
func (ru *run) editSeries(ctx context.Context, first, end int, tag string) ([]Edit, int, error) {
	before, err := ru.f.read(ctx)
	if err != nil {
		return nil, 0, err
	}
	kcpBefore, err := scrapeServerMetrics(ctx, ru.f.KCP)
	if err != nil {
		return nil, 0, err
	}
	servedBefore, err := ru.f.readServed(ctx)
	if err != nil {
		return nil, 0, err
	}
	edits, lost, err := ru.f.PushEdits(ctx, first, end, ru.opts.PushEdits, ru.opts.EditRate, tag)
	if err != nil {
		return nil, 0, err
	}
	after, err := ru.f.read(ctx)
	if err != nil {
		return nil, 0, err
	}
	kcpAfter, err := scrapeServerMetrics(ctx, ru.f.KCP)
	if err != nil {
		return nil, 0, err
	}
	servedAfter, err := ru.f.readServed(ctx)
	if err != nil {
		return nil, 0, err
	}
	const reads = "lifecycle_manager_push_reads_total"
	kyma := metrics.Labels{"controller": "kyma"}
	ru.r.Push.Reads[tag] = delta(before.snapshot.By(reads, "outcome", kyma), after.snapshot.By(reads, "outcome", kyma))
	ops := seriesInOperator(before, after)
	stored := make([]time.Duration, len(edits))
	for i, e := range edits {
		stored[i] = e.Stored
	}
	w := stats.Summarize(stored)
	ops.EditWrite = &w
	ops.KCPMeanMs = kcpMeanMs(kcpBefore.ServedDurations(), kcpAfter.ServedDurations())
	ops.Served = servedSince(servedBefore, servedAfter)
	ru.r.Push.InOperator[tag] = ops
	return edits, lost, nil
}

func summarize(edits []Edit) *stats.Latency {
	ds := make([]time.Duration, len(edits))
	for i, e := range edits {
		ds[i] = e.Latency
	}
	l := stats.Summarize(ds)
	return &l
}
