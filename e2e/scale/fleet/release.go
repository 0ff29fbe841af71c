package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lifecycle-manager/e2e/scale/report"
)

// releaseVersion is the new version of the first module.
const releaseVersion = "1.0.1"

// releasePhase publishes a new version of the first module to the channel
// of every Kyma and waits until all run it and are Ready again; the push
// edits under load run meanwhile.
func (ru *run) releasePhase(ctx context.Context) error {
	f := ru.f
	before, err := f.read(ctx)
	if err != nil {
		return err
	}
	servedBefore, err := f.readServed(ctx)
	if err != nil {
		return err
	}
	ru.opts.Progress("releasing %s %s to channel %s (spread %s, at most %g Kymas/s)", ModuleName(1), releaseVersion, Channel, ru.opts.ReleaseSpread, ru.opts.ReleaseRate)
	if err := f.Publish(ctx, ModuleName(1), releaseVersion); err != nil {
		return err
	}
	start := time.Now()
	f.profileCPU(ctx, "cpu-release.pprof", 0)
	pushDone := ru.pushUnderLoad(ctx)
	if ru.opts.ReleasePushOnly {
		ru.opts.Progress("measuring only the push edits during the release")
		return <-pushDone
	}
	var first, last time.Time
	wait, cancel := context.WithTimeout(ctx, ru.opts.ReadyTimeout)
	defer cancel()
	err = f.watchProgress(wait, start, &ru.release, releaseVersion, func(c Census) bool {
		if c.OnVersion > 0 && first.IsZero() {
			first = time.Now()
		}
		if c.OnVersion == ru.opts.Kymas && c.Ready == ru.opts.Kymas {
			last = time.Now()
			return true
		}
		return false
	})
	after, rerr := f.read(ctx)
	perr := <-pushDone
	if err = errors.Join(err, rerr, perr); err != nil {
		return fmt.Errorf("waiting for every Kyma to run %s %s: %w", ModuleName(1), releaseVersion, err)
	}
	seconds := last.Sub(start).Seconds()
	rel := &report.Release{Module: ModuleName(1), Kymas: ru.opts.Kymas, Spread: report.Duration(ru.opts.ReleaseSpread),
		Rate: ru.opts.ReleaseRate, Seconds: seconds, FirstToLastUpdate: last.Sub(first).Seconds(),
		CPUSeconds:          after.usage.CPUSeconds - before.usage.CPUSeconds,
		ReconcilesPerSecond: (after.total() - before.total()) / after.at.Sub(before.at).Seconds()}
	for _, p := range ru.release.reconcileRate {
		rel.PeakReconcilesPerS = max(rel.PeakReconcilesPerS, p.Y)
	}
	if servedAfter, err := f.readServed(ctx); err == nil {
		rel.Served = servedSince(servedBefore, servedAfter)
	}
	ru.r.Release = rel
	ru.r.Operator.PeakRSS = max(ru.r.Operator.PeakRSS, after.usage.PeakRSS)
	return nil
}

// pushUnderLoad makes the push edits while the release runs; the channel
// yields once they are done.
func (ru *run) pushUnderLoad(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	if ru.opts.PushEdits == 0 || ru.r.Push == nil || ru.opts.PushRuntimes == 0 {
		done <- nil
		return done
	}
	go func() {
		edits, lost, err := ru.editSeries(ctx, 0, ru.opts.PushRuntimes, "load")
		if err == nil {
			ru.push["load"] = edits
			ru.r.Push.UnderLoad = summarize(edits)
			ru.r.Push.Lost += lost
			err = ru.countReleased(ctx)
		}
		if err == nil {
			err = ru.listenerToReconcile(ctx)
		}
		done <- err
	}()
	return done
}

// countReleased notes how far the release got while the push edits ran:
// a release paced to nothing would leave the push fast for no credit.
func (ru *run) countReleased(ctx context.Context) error {
	c, err := ru.f.Count(ctx, releaseVersion)
	if err != nil {
		return err
	}
	ru.r.Push.InOperator["load"].Released = c.OnVersion
	ru.opts.Progress("%d of %d Kymas Ready on %s when the push edits ended", c.OnVersion, c.Kymas, releaseVersion)
	return nil
}
