package schedule

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Pace is how a controller fans one change out to many Kymas.
type Pace struct {
	// Rate caps the Kymas per second the controller re-enqueues over all
	// its fan-outs. 0: no cap, every Kyma at once.
	Rate float64
}

// Pacer hands out the times at which a controller's fan-outs re-enqueue
// their Kymas: one after another at its Rate, so that two changes in a row
// do not double it. A release is background
// work on every runtime; capping its rate leaves the API servers room for
// pushed changes, which the priority queue alone cannot do once their
// requests wait at a saturated server.
//
// The times are kept on the Pacer's own clock, which runs at its pace
// (SetPace): at 1 with the wall clock, at 0.5 half as fast, so a fan-out
// under way slows down and speeds up again without handing out new
// times. Start runs the clock: it enqueues each Kyma when its time comes.
type Pacer struct {
	pace Pace
	now  func() time.Time
	wake chan struct{}

	mu    sync.Mutex
	clock pacedClock
	// next is the first free time once the slots handed out are taken.
	next time.Time
	// last is the latest time handed out.
	last time.Time
	// slots are the times handed out that are still to come: a Kyma asked
	// for again keeps its time instead of taking a second one.
	slots map[types.NamespacedName]time.Time
	// due are the Kymas to enqueue, earliest first.
	due dueHeap
}

// NewPacer returns a Pacer for p.
func NewPacer(p Pace) *Pacer {
	return &Pacer{pace: p, now: time.Now, wake: make(chan struct{}, 1), slots: map[types.NamespacedName]time.Time{}}
}

func (p *Pacer) paced() bool {
	return p != nil && p.pace.Rate > 0
}

// Enqueue adds keys to q as background work, each when its time on the
// Pacer's clock comes; a key that has a time to come keeps it.
func (p *Pacer) Enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], keys []types.NamespacedName) {
	if !p.paced() {
		for _, k := range keys {
			Background(q, reconcile.Request{NamespacedName: k}, 0)
		}
		return
	}
	var ready []types.NamespacedName
	p.mu.Lock()
	now, slots, fresh := p.assign(keys)
	for i, k := range keys {
		switch {
		case !slots[i].After(now):
			ready = append(ready, k)
		case fresh[i]:
			heap.Push(&p.due, dueKey{at: slots[i], key: k, q: q})
		}
	}
	p.mu.Unlock()
	p.poke()
	for _, k := range ready {
		Background(q, reconcile.Request{NamespacedName: k}, 0)
	}
}

// Delays returns, for each of keys, how long from now on the Pacer's clock
// it waits; at pace 1 that is wall-clock time.
func (p *Pacer) Delays(keys []types.NamespacedName) []time.Duration {
	delays := make([]time.Duration, len(keys))
	if !p.paced() {
		return delays
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now, slots, _ := p.assign(keys)
	for i, at := range slots {
		delays[i] = at.Sub(now)
	}
	return delays
}

// assign gives each key its time on the Pacer's clock and reports which
// were new. The caller holds mu.
func (p *Pacer) assign(keys []types.NamespacedName) (now time.Time, slots []time.Time, fresh []bool) {
	now = p.clock.at(p.now())
	p.forgetPast(now)
	slots, fresh = make([]time.Time, len(keys)), make([]bool, len(keys))
	n := 0
	for i, k := range keys {
		if _, ok := p.slots[k]; !ok {
			fresh[i] = true
			n++
		}
	}
	step, start := p.window(now)
	taken := 0
	for i, k := range keys {
		at, ok := p.slots[k]
		if !ok {
			at = start.Add(time.Duration(taken) * step)
			p.slots[k] = at
			taken++
		}
		slots[i] = at
		if at.After(p.last) {
			p.last = at
		}
	}
	p.next = start.Add(time.Duration(taken) * step)
	return now, slots, fresh
}

// window is the gap between two new slots and the first of them: after the
// slots already handed out, so that fan-outs queue behind each other.
func (p *Pacer) window(now time.Time) (step time.Duration, start time.Time) {
	step, start = time.Duration(float64(time.Second)/p.pace.Rate), now
	if p.next.After(now) {
		start = p.next
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

// SetPace sets how fast the Pacer's clock runs against the wall clock,
// from just above 0 to 1; it implements Paced.
func (p *Pacer) SetPace(pace float64) {
	if p == nil || pace <= 0 {
		return
	}
	p.mu.Lock()
	p.clock.setPace(p.now(), min(pace, 1))
	p.mu.Unlock()
	p.poke()
}

// poke wakes Start to look at the earliest Kyma again.
func (p *Pacer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Start enqueues the Kymas whose time has come until ctx ends; it
// implements manager.Runnable.
func (p *Pacer) Start(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := p.dispatch()
		if wait < 0 {
			wait = time.Hour
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// dispatch enqueues the Kymas whose time has come and returns the
// wall-clock wait until the next one, or -1 without one.
func (p *Pacer) dispatch() time.Duration {
	p.mu.Lock()
	wall := p.now()
	now := p.clock.at(wall)
	var ready []dueKey
	for p.due.Len() > 0 && !p.due[0].at.After(now) {
		ready = append(ready, heap.Pop(&p.due).(dueKey))
	}
	wait := time.Duration(-1)
	if p.due.Len() > 0 {
		wait = p.clock.wall(p.due[0].at.Sub(now))
	}
	p.mu.Unlock()
	for _, d := range ready {
		Background(d.q, reconcile.Request{NamespacedName: d.key}, 0)
	}
	return wait
}

// Backlog is how long, at the current pace, until the last Kyma handed
// out is due: how far the fan-outs under way (a release) still reach.
func (p *Pacer) Backlog() time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(0, p.clock.wall(p.last.Sub(p.clock.at(p.now()))))
}

// RegisterBacklog exports p's Backlog as
// lifecycle_manager_fan_out_backlog_seconds of controller.
func RegisterBacklog(reg prometheus.Registerer, controller string, p *Pacer) error {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "lifecycle_manager_fan_out_backlog_seconds",
		Help:        "How long until the last Kyma that a ModuleTemplate, ModuleReleaseMeta or Watcher change re-enqueues is due (--fan-out-rate, at the current lifecycle_manager_fan_out_pace).",
		ConstLabels: prometheus.Labels{"controller": controller},
	}, func() float64 { return p.Backlog().Seconds() })
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("registering the fan-out backlog of %s: %w", controller, err)
	}
	return nil
}
