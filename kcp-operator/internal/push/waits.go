package push

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/listener/event"
)

// Object names a runtime object whatever API version it is read in.
type Object struct {
	schema.GroupKind
	types.NamespacedName
}

// ObjectOf is the object an event reports.
func ObjectOf(ev event.Event) Object {
	return Object{GroupKind: ev.GVK.GroupKind(), NamespacedName: ev.Object}
}

// Defaults of WaitsOptions.
const (
	// DefaultFirstBackoff is the pause before the first reread: the API
	// server stores a write a few milliseconds after its webhooks answered.
	DefaultFirstBackoff = 10 * time.Millisecond
	// DefaultRereads bounds the rereads of one object in one reconcile
	// (10, 20, 40, 80 ms: 150 ms at most).
	DefaultRereads = 4
	// DefaultMaxAge is how long a wait is kept across reconciles before it
	// is given up; the periodic resync covers it then.
	DefaultMaxAge = 10 * time.Second
	// MaxWaitsPerRequest bounds the objects one request waits for, and
	// MaxWaits all waits: what runtimes send cannot grow them further (a
	// wait beyond is not recorded; its reconcile still runs, without the
	// reread guard for that object).
	MaxWaitsPerRequest = 256
	MaxWaits           = 1 << 16
)

// WaitsOptions tune Waits; zero values take the defaults.
type WaitsOptions struct {
	FirstBackoff time.Duration
	Rereads      int
	MaxAge       time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// wait is one object's write that a reconcile has to see.
type wait struct {
	version string
	since   time.Time
}

// Waits holds, per reconcile request, the writes its next reconcile must
// see. The event sources add to it; a reconcile takes its waits when it
// starts. A nil *Waits holds nothing.
//
// Its memory is bounded whether or not the requests are ever reconciled
// (a Kyma deleted meanwhile is not): a sweep drops every wait older than
// MaxAge, and runs at most MaxAge apart while waits come in; no request
// holds more than MaxWaitsPerRequest waits, and all together no more than
// MaxWaits.
type Waits struct {
	opts      WaitsOptions
	reads     *prometheus.CounterVec
	early     prometheus.Counter
	mu        sync.Mutex
	pending   map[types.NamespacedName]map[Object]wait
	total     int
	lastSweep time.Time
}

// Outcomes of a read, the label values of lifecycle_manager_push_reads_total.
const (
	OutcomeFresh    = "fresh"     // the first read held the write
	OutcomeCaughtUp = "caught_up" // an early read, and a reread held it
	OutcomeGaveUp   = "gave_up"   // still early after every reread: a second look later
	OutcomeExpired  = "expired"   // never seen within MaxAge: left to the resync
	OutcomeDropped  = "dropped"   // not recorded: the request or all waits were at their bound
)

// NewWaits returns Waits with its metric registered on reg under name (e.g.
// "kyma"), so that each controller's reads are counted apart.
func NewWaits(reg prometheus.Registerer, controller string, o WaitsOptions) (*Waits, error) {
	if o.FirstBackoff <= 0 {
		o.FirstBackoff = DefaultFirstBackoff
	}
	if o.Rereads <= 0 {
		o.Rereads = DefaultRereads
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	reads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "lifecycle_manager_push_reads_total",
		Help:        "Reads of runtime objects that a pushed event with a pre-write version reported, by outcome.",
		ConstLabels: prometheus.Labels{"controller": controller},
	}, []string{"outcome"})
	early := prometheus.NewCounter(prometheus.CounterOpts{
		Name:        "lifecycle_manager_push_early_reads_total",
		Help:        "Reads of runtime objects that still showed the version before a pushed write, so were read again.",
		ConstLabels: prometheus.Labels{"controller": controller},
	})
	for _, c := range []prometheus.Collector{reads, early} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the push read metrics: %w", err)
		}
	}
	return &Waits{opts: o, reads: reads, early: early, pending: map[types.NamespacedName]map[Object]wait{}}, nil
}

// Expect records that the next reconcile of req must read obj past
// version, the object's version before a write reported at received.
// Several writes of one object merge as the listener merges them.
func (w *Waits) Expect(req types.NamespacedName, obj Object, version string, received time.Time) {
	if w == nil || version == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expectLocked(req, obj, wait{version: version, since: received})
}

// expectLocked records add and reports whether it did (a bound may refuse it).
func (w *Waits) expectLocked(req types.NamespacedName, obj Object, add wait) bool {
	w.sweepLocked(w.opts.Now())
	objs := w.pending[req]
	have, ok := objs[obj]
	switch {
	case ok:
		add.version = event.NewerVersion(have.version, add.version)
		if have.since.Before(add.since) {
			add.since = have.since
		}
	case len(objs) >= MaxWaitsPerRequest || w.total >= MaxWaits:
		w.reads.WithLabelValues(OutcomeDropped).Inc()
		return false
	case objs == nil:
		objs = map[Object]wait{}
		w.pending[req] = objs
		fallthrough
	default:
		w.total++
	}
	objs[obj] = add
	return true
}

// sweepLocked drops the waits older than MaxAge, every MaxAge, and sooner
// (at most once a second) when all waits are at their bound.
func (w *Waits) sweepLocked(now time.Time) {
	since := now.Sub(w.lastSweep)
	if since < w.opts.MaxAge && (w.total < MaxWaits || since < time.Second) {
		return
	}
	w.lastSweep = now
	for req, objs := range w.pending {
		for obj, wt := range objs {
			if now.Sub(wt.since) > w.opts.MaxAge {
				delete(objs, obj)
				w.total--
				w.reads.WithLabelValues(OutcomeExpired).Inc()
			}
		}
		if len(objs) == 0 {
			delete(w.pending, req)
		}
	}
}

// Take hands the waits of req to the reconcile that starts now.
func (w *Waits) Take(req types.NamespacedName) *Pending {
	p := &Pending{owner: w, req: req}
	if w == nil {
		return p
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p.waits = w.pending[req]
	w.total -= len(p.waits)
	delete(w.pending, req)
	return p
}

// Len is the number of requests with waits, for tests and metrics.
func (w *Waits) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// Count is the number of waits of all requests together.
func (w *Waits) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// Stale reports whether a read that shows version read is older than the
// write after old: it shows old itself, or a version known to be older.
func Stale(read, old string) bool {
	return read == old || event.VersionNewer(old, read)
}
