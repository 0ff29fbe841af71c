package schedule

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

// Governor sets the pace of its fan-outs from its Meters once an interval.
type Governor struct {
	meters   []*Meter
	targets  []Paced
	interval time.Duration
	gauge    prometheus.Gauge
	writes   *prometheus.CounterVec
	log      logr.Logger

	pace float64
	// held counts the intervals a cut still waits before the next one.
	held int
}

// NewGovernor returns a Governor that steers targets from meters: the
// fan-outs slow down while most writes of any one Meter are slow. Its pace
// is exported as lifecycle_manager_fan_out_pace on reg, the writes it
// judged as lifecycle_manager_fan_out_timed_writes_total.
func NewGovernor(meters []*Meter, reg prometheus.Registerer, log logr.Logger, targets ...Paced) (*Governor, error) {
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "lifecycle_manager_fan_out_pace",
		Help: "Share of --fan-out-rate the fan-outs run at: below 1 while most KCP or runtime writes take longer than their latency target (KCP 100ms, runtimes 250ms).",
	})
	writes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lifecycle_manager_fan_out_timed_writes_total",
		Help: "The operator's writes timed for the fan-out pace, by the servers written to (KCP, runtime) and whether they took longer than their target.",
	}, []string{"servers", "slow"})
	for _, c := range []prometheus.Collector{gauge, writes} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the fan-out pace: %w", err)
		}
	}
	gauge.Set(1)
	return &Governor{meters: meters, targets: targets, interval: DefaultInterval, gauge: gauge, writes: writes, log: log, pace: 1}, nil
}

// Start steers until ctx ends; it implements manager.Runnable.
func (g *Governor) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(context.Context) { g.Step() }, g.interval)
	return nil
}

// reading is what one Meter counted in an interval.
type reading struct {
	meter        *Meter
	writes, slow int64
}

// busy tells a busy server from a few slow writes: most were slow, and
// there were enough of them (one slow lease renewal is not a busy server).
func (r reading) busy() bool { return r.writes >= minWrites && 2*r.slow > r.writes }

// Step reads the writes of the interval that ended and sets the next pace.
func (g *Governor) Step() {
	var busy *reading
	for _, m := range g.meters {
		writes, slow := m.Take()
		g.writes.WithLabelValues(m.servers, "false").Add(float64(writes - slow))
		g.writes.WithLabelValues(m.servers, "true").Add(float64(slow))
		if r := (reading{m, writes, slow}); busy == nil && r.busy() {
			busy = &r
		}
	}
	next := g.next(busy != nil)
	if next == g.pace {
		return
	}
	g.logChange(next, busy)
	g.pace = next
	g.gauge.Set(next)
	for _, t := range g.targets {
		t.SetPace(next)
	}
}

// logChange tells when the fan-outs leave and regain full pace; the cuts
// in between, one every few seconds on a busy KCP, are debug detail.
func (g *Governor) logChange(next float64, busy *reading) {
	switch {
	case busy == nil:
		if next == 1 {
			g.log.Info("the fan-outs are back at full pace")
		}
	case g.pace == 1:
		g.log.Info(busy.meter.servers+" writes are slow: the fan-outs slow down",
			"writes", busy.writes, "slow", busy.slow, "target", busy.meter.target, "pace", next)
	default:
		g.log.V(1).Info(busy.meter.servers+" writes are still slow: the fan-outs slow down further",
			"writes", busy.writes, "slow", busy.slow, "pace", next)
	}
}

// Pace is the current pace.
func (g *Governor) Pace() float64 { return g.pace }

// next halves the pace when a server was busy and raises it a step
// otherwise.
func (g *Governor) next(busy bool) float64 {
	if busy {
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
