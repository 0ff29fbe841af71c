package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/lifecycle-manager/e2e/scale/metrics"
	"github.com/lifecycle-manager/e2e/scale/plot"
	"github.com/lifecycle-manager/e2e/scale/proc"
)

// reading is the operator's counters at one moment; with shards, the sum
// of the instances', and shards holds each one's process usage.
type reading struct {
	at         time.Time
	usage      proc.Usage
	shards     []proc.Usage
	reconciles map[string]float64
	kcpMethods map[string]float64
	runtime    float64
	snapshot   metrics.Snapshot
}

func (r reading) total() float64 {
	sum := 0.0
	for _, v := range r.reconciles {
		sum += v
	}
	return sum
}

func (r reading) kcp() float64 {
	sum := 0.0
	for _, v := range r.kcpMethods {
		sum += v
	}
	return sum
}

// read scrapes the operators' metrics and reads their processes.
func (f *Fleet) read(ctx context.Context) (reading, error) {
	r := reading{}
	snaps := make([]metrics.Snapshot, 0, len(f.Operators))
	for _, op := range f.Operators {
		usage, err := proc.Default.Usage(op.Pid())
		if err != nil {
			return reading{}, err
		}
		snap, err := metrics.Scrape(ctx, http.DefaultClient, "http://"+op.MetricsAddr+"/metrics")
		if err != nil {
			return reading{}, fmt.Errorf("scraping %s: %w", op.Name, err)
		}
		r.shards, snaps = append(r.shards, usage), append(snaps, snap)
		r.usage.CPUSeconds += usage.CPUSeconds
		r.usage.RSS += usage.RSS
		r.usage.PeakRSS += usage.PeakRSS
	}
	u, err := url.Parse(f.KCP.Config.Host)
	if err != nil {
		return reading{}, fmt.Errorf("the KCP's address: %w", err)
	}
	const requests = "rest_client_requests_total"
	r.at, r.snapshot = time.Now(), metrics.Merge(snaps...)
	r.reconciles = r.snapshot.By("controller_runtime_reconcile_total", "controller", nil)
	r.kcpMethods = r.snapshot.By(requests, "method", metrics.Labels{"host": u.Host})
	r.runtime = r.snapshot.Sum(requests, nil) - r.kcp()
	return r, nil
}

// delta is b minus a per key.
func delta(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		out[k] = v - a[k]
	}
	return out
}

// series samples the Ready Kymas and the operator's reconcile rate every
// interval until stop is closed, for the plots.
type series struct {
	ready, reconcileRate []plot.XY
	// peakRSS is the operator's peak, shardPeakRSS each shard's.
	peakRSS      int64
	shardPeakRSS []int64
}

func (s *series) notePeaks(r reading) {
	s.peakRSS = max(s.peakRSS, r.usage.PeakRSS)
	if len(s.shardPeakRSS) < len(r.shards) {
		s.shardPeakRSS = make([]int64, len(r.shards))
	}
	for i, u := range r.shards {
		s.shardPeakRSS[i] = max(s.shardPeakRSS[i], u.PeakRSS)
	}
}

// watchProgress samples until ctx ends or done reports true; it returns
// when done held (nil) or ctx ended.
func (f *Fleet) watchProgress(ctx context.Context, start time.Time, s *series, version string,
	done func(Census) bool,
) error {
	// Each scrape renders every metric series, among them one per Kyma not
	// Ready yet: at 10,000 Kymas a scrape every 5 s was 5% of the
	// operator's CPU, so there the operator is scraped every 15 s (a
	// Prometheus scrapes every 30 s to 1 min) while the Ready count, read
	// from the harness's own cache, is sampled every 5 s.
	interval, scrapeEvery := 2*time.Second, 1
	if f.opts.Kymas > 3000 {
		interval, scrapeEvery = 5*time.Second, 3
	}
	lastProgress := time.Time{}
	prev, err := f.read(ctx)
	if err != nil {
		return err
	}
	now := prev
	for sample := 1; ; sample++ {
		c, err := f.Count(ctx, version)
		if err != nil {
			return err
		}
		finished := done(c)
		x := time.Since(start).Seconds()
		if sample%scrapeEvery == 0 || finished {
			if now, err = f.read(ctx); err != nil {
				return err
			}
			s.reconcileRate = append(s.reconcileRate, plot.XY{X: x, Y: (now.total() - prev.total()) / now.at.Sub(prev.at).Seconds()})
			s.notePeaks(now)
			prev = now
		}
		y := c.Ready
		if version != "" {
			y = c.OnVersion
		}
		s.ready = append(s.ready, plot.XY{X: x, Y: float64(y)})
		if finished {
			return nil
		}
		if time.Since(lastProgress) > 30*time.Second {
			f.opts.Progress("  %5.0fs: %d of %d Kymas Ready (%d on the version), operator RSS %d MiB (all instances)",
				x, c.Ready, c.Kymas, c.OnVersion, now.usage.RSS>>20)
			lastProgress = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
