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
	var pushDone <-chan error
	var first, last time.Time
	ru.opts.Progress("releasing %s %s to channel %s (at most %g Kymas/s)", ModuleName(1), releaseVersion, Channel, ru.opts.ReleaseRate)
	a, err := ru.absorb(ctx, change{
		profile: "cpu-release.pprof",
		make: func(ctx context.Context) error {
			if err := ru.f.Publish(ctx, ModuleName(1), releaseVersion); err != nil {
				return err
			}
			pushDone = ru.pushUnderLoad(ctx)
			return nil
		},
		settle: func(wait context.Context, a *absorbed) error {
			if ru.opts.ReleasePushOnly {
				ru.opts.Progress("measuring only the push edits during the release")
				return <-pushDone
			}
			err := ru.f.watchProgress(wait, a.start, &ru.release, releaseVersion, func(c Census) bool {
				if c.OnVersion > 0 && first.IsZero() {
					first = time.Now()
				}
				if c.OnVersion == ru.opts.Kymas && c.Ready == ru.opts.Kymas {
					last = time.Now()
					return true
				}
				return false
			})
			// The release ends when the last Kyma runs it, not when the
			// push edits beside it do.
			var rerr error
			a.after, rerr = ru.f.read(ctx)
			if err = errors.Join(err, rerr, <-pushDone); err != nil {
				return fmt.Errorf("waiting for every Kyma to run %s %s: %w", ModuleName(1), releaseVersion, err)
			}
			return nil
		},
	})
	if err != nil || ru.opts.ReleasePushOnly {
		return err
	}
	rel := &report.Release{Module: ModuleName(1), Kymas: ru.opts.Kymas,
		Rate: ru.opts.ReleaseRate, Seconds: last.Sub(a.start).Seconds(), FirstToLastUpdate: last.Sub(first).Seconds(),
		CPUSeconds: a.cpu(), ReconcilesPerSecond: a.reconciles() / a.seconds(), Served: a.served}
	for _, p := range ru.release.reconcileRate {
		rel.PeakReconcilesPerS = max(rel.PeakReconcilesPerS, p.Y)
	}
	ru.r.Release = rel
	ru.r.Operator.PeakRSS = max(ru.r.Operator.PeakRSS, a.after.usage.PeakRSS)
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
