package schedule

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Settled delays the requests h adds by settle, so that a burst of changes
// to related objects costs one reconcile: a request already waiting keeps
// its earlier time, so the burst's later changes join it. The Kyma
// controller hears of its Manifests this way — the modules of one Kyma are
// applied and become ready at about the same time, and each step of each
// would otherwise reconcile (and write) the Kyma once more. Priorities h
// sets are kept.
func Settled(h handler.EventHandler, settle time.Duration) handler.EventHandler {
	return settled{h: h, settle: settle}
}

type settled struct {
	h      handler.EventHandler
	settle time.Duration
}

// Queue is the queue type event handlers are given.
type Queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (s settled) wrap(q Queue) Queue {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return settledPriorityQueue{PriorityQueue: pq, settle: s.settle}
	}
	return settledQueue{Queue: q, settle: s.settle}
}

// Create implements handler.EventHandler.
func (s settled) Create(ctx context.Context, e event.CreateEvent, q Queue) {
	s.h.Create(ctx, e, s.wrap(q))
}

// Update implements handler.EventHandler.
func (s settled) Update(ctx context.Context, e event.UpdateEvent, q Queue) {
	s.h.Update(ctx, e, s.wrap(q))
}

// Delete implements handler.EventHandler.
func (s settled) Delete(ctx context.Context, e event.DeleteEvent, q Queue) {
	s.h.Delete(ctx, e, s.wrap(q))
}

// Generic implements handler.EventHandler.
func (s settled) Generic(ctx context.Context, e event.GenericEvent, q Queue) {
	s.h.Generic(ctx, e, s.wrap(q))
}

// settledQueue turns immediate adds into adds after settle.
type settledQueue struct {
	Queue
	settle time.Duration
}

func (q settledQueue) Add(item reconcile.Request) { q.AddAfter(item, q.settle) }

func (q settledQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.Queue.AddAfter(item, max(after, q.settle))
}

// settledPriorityQueue does the same for a priority queue, keeping the
// priority the handler chose.
type settledPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	settle time.Duration
}

func (q settledPriorityQueue) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q settledPriorityQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (q settledPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	o.After = max(o.After, q.settle)
	q.PriorityQueue.AddWithOpts(o, items...)
}
