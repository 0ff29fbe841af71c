package enqueue

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// Pace is how a controller fans one change out to many Kymas.
type Pace struct {
	// Spread is the shortest window a fan-out is spread over.
	Spread time.Duration
	// Rate caps the Kymas per second the controller re-enqueues over all
	// its fan-outs; the window grows beyond Spread where needed. 0: no cap.
	Rate float64
}

// Pacer hands out the times at which a controller's fan-outs re-enqueue
// their Kymas: evenly over the window, and with a Rate, one after another
// so that two changes in a row do not double it. A release is background
// work on every runtime; capping its rate leaves the API servers room for
// pushed changes, which the priority queue alone cannot do once their
// requests wait at a saturated server.
type Pacer struct {
	pace Pace
	now  func() time.Time

	mu sync.Mutex
	// next is the first free time once the slots handed out are taken.
	next time.Time
	// last is the latest time handed out.
	last time.Time
	// slots are the times handed out that are still to come: a Kyma asked
	// for again keeps its time instead of taking a second one.
	slots map[types.NamespacedName]time.Time
}

// NewPacer returns a Pacer for p.
func NewPacer(p Pace) *Pacer {
	return &Pacer{pace: p, now: time.Now, slots: map[types.NamespacedName]time.Time{}}
}

// Delays returns, for each of keys, how long from now to wait before it
// is enqueued. A key that still has a time to come gets that time again:
// re-adding it is harmless where the queue holds it, and brings it back
// where something else had it reconciled before the change.
func (p *Pacer) Delays(keys []types.NamespacedName) []time.Duration {
	if p == nil || (p.pace.Spread <= 0 && p.pace.Rate <= 0) {
		return make([]time.Duration, len(keys))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.forgetPast(now)
	fresh := 0
	for _, k := range keys {
		if _, ok := p.slots[k]; !ok {
			fresh++
		}
	}
	step, start := p.window(now, fresh)
	delays := make([]time.Duration, len(keys))
	taken := 0
	for i, k := range keys {
		at, ok := p.slots[k]
		if !ok {
			at = start.Add(time.Duration(taken) * step)
			p.slots[k] = at
			taken++
		}
		delays[i] = at.Sub(now)
		if at.After(p.last) {
			p.last = at
		}
	}
	if p.pace.Rate > 0 {
		p.next = start.Add(time.Duration(taken) * step)
	}
	return delays
}

// window is the gap between two new slots and the first of them. Without a
// Rate each fan-out has its own window from now, as if alone.
func (p *Pacer) window(now time.Time, n int) (step time.Duration, start time.Time) {
	if n > 0 && p.pace.Spread > 0 {
		step = p.pace.Spread / time.Duration(n)
	}
	start = now
	if p.pace.Rate > 0 {
		step = max(step, time.Duration(float64(time.Second)/p.pace.Rate))
		if p.next.After(now) {
			start = p.next
		}
	}
	return step, start
}

func (p *Pacer) forgetPast(now time.Time) {
	for k, at := range p.slots {
		if !at.After(now) {
			delete(p.slots, k)
		}
	}
}

// Backlog is how long until the last Kyma handed out is due: how far the
// fan-outs under way (a release) still reach.
func (p *Pacer) Backlog() time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(0, p.last.Sub(p.now()))
}

// RegisterBacklog exports p's Backlog as
// lifecycle_manager_fan_out_backlog_seconds of controller.
func RegisterBacklog(reg prometheus.Registerer, controller string, p *Pacer) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "lifecycle_manager_fan_out_backlog_seconds",
		Help:        "How long until the last Kyma that a ModuleTemplate, ModuleReleaseMeta or Watcher change re-enqueues is due (--fan-out-rate, --template-change-spread).",
		ConstLabels: prometheus.Labels{"controller": controller},
	}, func() float64 { return p.Backlog().Seconds() })
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("registering the fan-out backlog of %s: %w", controller, err)
	}
	return nil
}
