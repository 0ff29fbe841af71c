package pushindex

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
type Tracker struct {
	mu      sync.Mutex
	pending map[types.NamespacedName]Hop
	last    map[types.NamespacedName]Hop
	latency prometheus.Histogram
}

// Hop is one measured reconcile: when the listener received the earliest
// and the latest event merged into it, and when it started. The earliest
// is the latency; the latest tells whether a given event was served.
type Hop struct {
	Received, Latest, Reconciled time.Time
}

// NewTracker registers the push latency histogram on reg.
func NewTracker(reg prometheus.Registerer) (*Tracker, error) {
	t := &Tracker{
		pending: map[types.NamespacedName]Hop{},
		last:    map[types.NamespacedName]Hop{},
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lifecycle_manager_push_to_reconcile_seconds",
			Help:    "From an event reaching the listener to the start of the reconcile it enqueued.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12),
		}),
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
	h, ok := t.pending[key]
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
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.pending[key]
	if !ok {
		return
	}
	delete(t.pending, key)
	h.Reconciled = now
	t.last[key] = h
	t.latency.Observe(now.Sub(h.Received).Seconds())
}

// Last returns the last measured hop of key.
func (t *Tracker) Last(key types.NamespacedName) (Hop, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.last[key]
	return h, ok
}
