package push

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// Tracker measures the push path's last hop: from the event reaching the
// listener to the reconcile of the object it enqueued. The event sources
// mark a key when they enqueue it; the reconcilers take the mark when they
// start.
//
// Its memory is bounded whatever runtimes send and whether their Kymas
// still exist: a mark or measured hop older than TrackerMaxAge is dropped
// by the next sweep, sweeps run at most TrackerMaxAge/2 apart while marks
// come in, and neither map holds more than TrackerMaxKeys keys (a mark
// beyond is not recorded; the reconcile still runs).
type Tracker struct {
	now       func() time.Time
	mu        sync.Mutex
	pending   map[types.NamespacedName]Hop
	last      map[types.NamespacedName]Hop
	lastSweep time.Time
	latency   prometheus.Histogram
}

// The bounds of a Tracker.
const (
	// TrackerMaxAge: a mark whose reconcile has not started by then is
	// left to the resync (and not measured); a hop is kept this long for Last.
	TrackerMaxAge = 10 * time.Minute
	// TrackerMaxKeys bounds the keys of each map, above any fleet.
	TrackerMaxKeys = 1 << 16
)

// TrackerOption configures a Tracker.
type TrackerOption func(*Tracker)

// WithClock sets the Tracker's clock; time.Now by default.
func WithClock(now func() time.Time) TrackerOption {
	return func(t *Tracker) { t.now = now }
}

// Hop is one measured reconcile: when the listener received the earliest
// and the latest event merged into it, and when it started. The earliest
// is the latency; the latest tells whether a given event was served.
type Hop struct {
	Received, Latest, Reconciled time.Time
}

// NewTracker registers the push latency histogram on reg.
func NewTracker(reg prometheus.Registerer, opts ...TrackerOption) (*Tracker, error) {
	t := &Tracker{
		now:     time.Now,
		pending: map[types.NamespacedName]Hop{},
		last:    map[types.NamespacedName]Hop{},
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lifecycle_manager_push_to_reconcile_seconds",
			Help:    "From an event reaching the listener to the start of the reconcile it enqueued.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12),
		}),
	}
	for _, o := range opts {
		o(t)
	}
	if err := reg.Register(t.latency); err != nil {
		return nil, fmt.Errorf("registering the push latency metric: %w", err)
	}
	return t, nil
}

// Mark records that an event received at received enqueued key; the
// earliest unreconciled mark counts as the latency.
func (t *Tracker) Mark(key types.NamespacedName, received time.Time) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(t.now())
	h, ok := t.pending[key]
	if !ok && len(t.pending) >= TrackerMaxKeys {
		return
	}
	if !ok {
		h.Received = received
	}
	if received.After(h.Latest) {
		h.Latest = received
	}
	t.pending[key] = h
}

// Started records that the reconcile of key starts now.
func (t *Tracker) Started(key types.NamespacedName) {
	if t == nil {
		return
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.pending[key]
	if !ok {
		return
	}
	delete(t.pending, key)
	h.Reconciled = now
	if _, kept := t.last[key]; kept || len(t.last) < TrackerMaxKeys {
		t.last[key] = h
	}
	t.latency.Observe(now.Sub(h.Received).Seconds())
}

// sweepLocked drops what is older than TrackerMaxAge, every TrackerMaxAge/2,
// and sooner when a map is full.
func (t *Tracker) sweepLocked(now time.Time) {
	full := len(t.pending) >= TrackerMaxKeys || len(t.last) >= TrackerMaxKeys
	since := now.Sub(t.lastSweep)
	// A full map sweeps at most once a second: a mark is not an O(n) walk.
	if since < TrackerMaxAge/2 && (!full || since < time.Second) {
		return
	}
	t.lastSweep = now
	cutoff := now.Add(-TrackerMaxAge)
	for k, h := range t.pending {
		if h.Latest.Before(cutoff) {
			delete(t.pending, k)
		}
	}
	for k, h := range t.last {
		if h.Reconciled.Before(cutoff) {
			delete(t.last, k)
		}
	}
}

// Len returns the number of marked keys and of measured hops kept.
func (t *Tracker) Len() (pending, measured int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending), len(t.last)
}

// Last returns the last measured hop of key.
func (t *Tracker) Last(key types.NamespacedName) (Hop, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.last[key]
	return h, ok
}
