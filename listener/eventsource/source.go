package eventsource

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/listener/event"
)

// MapFunc returns the requests to enqueue for an event; none drops it. It
// runs on the source's goroutine, one event at a time, and should answer
// from memory (e.g. the manager's cache): while it runs, further events
// wait coalesced in the listener.
type MapFunc[R comparable] func(ctx context.Context, ev event.Event) []R

// Consumer hands out the events of a manager; *listener.Server is one.
type Consumer interface {
	// CanConsume fails when the manager is unknown or has a consumer already.
	CanConsume(manager string) error
	// Consume delivers the manager's events until ctx ends.
	Consume(ctx context.Context, manager string, deliver func(event.Event)) error
}

// Option tunes a source.
type Option func(*options)

type options struct {
	recheck  time.Duration
	awaits   func(event.Event) bool
	priority func(event.Event) int
}

// WithRecheck enqueues every request a second time after delay.
//
// Why: the agents are validating admission webhooks, which the runtime's
// API server calls before it stores the write. A reconcile that starts at
// once can read the object as it was and find nothing to do; without a
// second look the change would wait for the periodic resync. The queue
// merges the second request with a first one that has not started yet.
func WithRecheck(delay time.Duration) Option { return func(o *options) { o.recheck = delay } }

// WithVersionWait names the events whose pre-write version (see
// event.Event.OldResourceVersion) the consumer waits for itself: they get
// no recheck. The mapping function records what to wait for before it
// returns the requests; a reconcile that cannot see the write asks for its
// own second look.
func WithVersionWait(awaits func(event.Event) bool) Option {
	return func(o *options) { o.awaits = awaits }
}

// WithPriority sets the queue priority of an event's requests, Priority
// without it; e.g. to queue the requests of a runtime that pushes more
// than its share behind everyone else's.
func WithPriority(priority func(event.Event) int) Option {
	return func(o *options) { o.priority = priority }
}

// New returns a source of reconcile.Requests for builder.WatchesRawSource.
func New(c Consumer, manager string, mapFn MapFunc[reconcile.Request], opts ...Option) source.Source {
	return NewTyped(c, manager, mapFn, opts...)
}

// NewTyped returns a source of requests of any type, for typed controllers.
// A manager's events go to one source only: Start fails for a manager that
// has a consumer already.
func NewTyped[R comparable](c Consumer, manager string, mapFn MapFunc[R], opts ...Option) source.TypedSource[R] {
	s := &eventSource[R]{consumer: c, manager: manager, mapFn: mapFn}
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

type eventSource[R comparable] struct {
	consumer Consumer
	manager  string
	mapFn    MapFunc[R]
	opts     options
}

func (s *eventSource[R]) String() string { return "listener events of manager " + s.manager }

// Start attaches to the manager's events and returns; the events flow into
// q until ctx ends.
func (s *eventSource[R]) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[R]) error {
	if s.mapFn == nil {
		return fmt.Errorf("%s: no mapping function", s)
	}
	if err := s.consumer.CanConsume(s.manager); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	log := logf.FromContext(ctx).WithValues("manager", s.manager)
	go func() {
		err := s.consumer.Consume(ctx, s.manager, func(ev event.Event) {
			recheck, priority := s.opts.recheck, Priority
			if s.opts.awaits != nil && s.opts.awaits(ev) {
				recheck = 0
			}
			if s.opts.priority != nil {
				priority = s.opts.priority(ev)
			}
			for _, req := range s.mapFn(ctx, ev) {
				EnqueueAt(q, req, recheck, priority)
			}
		})
		if err != nil {
			log.Error(err, "listener events do not reach this controller")
		}
	}()
	return nil
}

// Priority is the queue priority of pushed requests in a controller with
// controller-runtime's priority queue (its default): above the initial
// list and resyncs (handler.LowPriority) and above ordinary events, so that
// a change someone just made is not queued behind background work such as
// a release rolling out to every Kyma.
const Priority = 100

// EnqueueWithRecheck adds a pushed request to q now, and again after
// recheck (see WithRecheck; 0 means once), with Priority where q supports
// priorities. Handlers of other pushed events use it too.
//
// The second add is a timer of its own, not q.AddAfter: a priority queue
// merges an item that is still waiting with a delayed add of the same item
// into one, at the earlier time, which would drop the recheck. The timer
// is bound to no context: controller-runtime cancels the context of an
// event handler as soon as the handler returns, so a timer that checked it
// never added anything. A queue that shut down meanwhile ignores the add.
func EnqueueWithRecheck[R comparable](q workqueue.TypedRateLimitingInterface[R], req R, recheck time.Duration) {
	EnqueueAt(q, req, recheck, Priority)
}

// EnqueueAt is EnqueueWithRecheck with the given priority.
func EnqueueAt[R comparable](q workqueue.TypedRateLimitingInterface[R], req R, recheck time.Duration, priority int) {
	enqueue(q, req, priority)
	if recheck > 0 {
		time.AfterFunc(recheck, func() { enqueue(q, req, priority) })
	}
}

func enqueue[R comparable](q workqueue.TypedRateLimitingInterface[R], req R, priority int) {
	if pq, ok := q.(priorityqueue.PriorityQueue[R]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(priority)}, req)
		return
	}
	q.Add(req)
}
