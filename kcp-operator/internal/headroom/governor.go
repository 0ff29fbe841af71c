package headroom

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Paced is what a Governor steers: a fan-out whose pace it sets, from
// MinPace to 1 (the configured rate).
type Paced interface {
	SetPace(pace float64)
}

// The Governor's steps. Halving at most every other interval gives the
// work already started time to finish before the next cut; raising by a
// fiftieth per interval brings the full rate back within a minute.
const (
	DefaultInterval = time.Second
	MinPace         = 1.0 / 32
	paceStep        = 1.0 / 50
	// minWrites is the fewest writes in an interval that can slow the
	// fan-out: one slow lease renewal is not a busy server.
	minWrites = 3
)

// Governor sets the pace of its fan-outs from its Meter once an interval.
type Governor struct {
	meter    *Meter
	targets  []Paced
	interval time.Duration
	gauge    prometheus.Gauge
	log      logr.Logger

	pace float64
	// held counts the intervals a cut still waits before the next one.
	held int
}

// NewGovernor returns a Governor that steers targets from meter, its pace
// exported as lifecycle_manager_fan_out_pace on reg.
func NewGovernor(meter *Meter, reg prometheus.Registerer, log logr.Logger, targets ...Paced) (*Governor, error) {
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "lifecycle_manager_fan_out_pace",
		Help: "Share of --fan-out-rate the fan-outs run at: below 1 while most KCP writes take longer than --fan-out-latency-target.",
	})
	if err := reg.Register(gauge); err != nil {
		return nil, fmt.Errorf("registering the fan-out pace: %w", err)
	}
	gauge.Set(1)
	return &Governor{meter: meter, targets: targets, interval: DefaultInterval, gauge: gauge, log: log, pace: 1}, nil
}

// Start steers until ctx ends; it implements manager.Runnable.
func (g *Governor) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(context.Context) { g.Step() }, g.interval)
	return nil
}

// Step reads the writes of the interval that ended and sets the next pace.
func (g *Governor) Step() {
	writes, slow := g.meter.Take()
	next := g.next(writes, slow)
	if next == g.pace {
		return
	}
	g.logChange(next, writes, slow)
	g.pace = next
	g.gauge.Set(next)
	for _, t := range g.targets {
		t.SetPace(next)
	}
}

// logChange tells when the fan-outs leave and regain full pace; the cuts
// in between, one every few seconds on a busy KCP, are debug detail.
func (g *Governor) logChange(next float64, writes, slow int64) {
	switch {
	case next < g.pace && g.pace == 1:
		g.log.Info("KCP writes are slow: the fan-outs slow down", "writes", writes, "slow", slow, "target", g.meter.target, "pace", next)
	case next < g.pace:
		g.log.V(1).Info("KCP writes are still slow: the fan-outs slow down further", "writes", writes, "slow", slow, "pace", next)
	case next == 1:
		g.log.Info("the fan-outs are back at full pace")
	}
}

// Pace is the current pace.
func (g *Governor) Pace() float64 { return g.pace }

// next halves the pace when most writes were slow and raises it a step
// otherwise.
func (g *Governor) next(writes, slow int64) float64 {
	if writes >= minWrites && 2*slow > writes {
		if g.held > 0 {
			g.held--
			return g.pace
		}
		g.held = 1
		return max(MinPace, g.pace/2)
	}
	g.held = 0
	return min(1, g.pace+paceStep)
}
