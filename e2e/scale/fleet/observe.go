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

// reading is the operator's counters at one moment.
type reading struct {
	at         time.Time
	usage      proc.Usage
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

// read scrapes the operator's metrics and reads its process.
func (f *Fleet) read(ctx context.Context) (reading, error) {
	usage, err := proc.Default.Usage(f.Operator.Pid())
	if err != nil {
		return reading{}, err
	}
	snap, err := metrics.Scrape(ctx, http.DefaultClient, "http://"+f.Operator.MetricsAddr+"/metrics")
	if err != nil {
		return reading{}, fmt.Errorf("scraping the operator: %w", err)
	}
	u, err := url.Parse(f.KCP.Config.Host)
	if err != nil {
		return reading{}, fmt.Errorf("the KCP's address: %w", err)
	}
	const requests = "rest_client_requests_total"
	all := snap.Sum(requests, nil)
	kcp := snap.By(requests, "method", metrics.Labels{"host": u.Host})
	r := reading{at: time.Now(), usage: usage, snapshot: snap,
		reconciles: snap.By("controller_runtime_reconcile_total", "controller", nil), kcpMethods: kcp}
	r.runtime = all - r.kcp()
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
	peakRSS              int64
}

// watchProgress samples until ctx ends or done reports true; it returns
// when done held (nil) or ctx ended.
func (f *Fleet) watchProgress(ctx context.Context, start time.Time, s *series, version string,
	done func(Census) bool,
) error {
	interval := 2 * time.Second
	if f.opts.Kymas > 3000 {
		interval = 5 * time.Second
	}
	lastProgress := time.Time{}
	prev, err := f.read(ctx)
	if err != nil {
		return err
	}
	for {
		c, err := f.Count(ctx, version)
		if err != nil {
			return err
		}
		now, err := f.read(ctx)
		if err != nil {
			return err
		}
		x := now.at.Sub(start).Seconds()
		y := c.Ready
		if version != "" {
			y = c.OnVersion
		}
		s.ready = append(s.ready, plot.XY{X: x, Y: float64(y)})
		s.reconcileRate = append(s.reconcileRate, plot.XY{X: x, Y: (now.total() - prev.total()) / now.at.Sub(prev.at).Seconds()})
		s.peakRSS = max(s.peakRSS, now.usage.PeakRSS)
		prev = now
		if done(c) {
			return nil
		}
		if time.Since(lastProgress) > 30*time.Second {
			f.opts.Progress("  %5.0fs: %d of %d Kymas Ready (%d on the version), operator RSS %d MiB",
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
