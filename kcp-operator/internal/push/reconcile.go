package push

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Bookkeeping is the push path's part of one controller's reconciles: the
// Tracker that measures the last hop, the Waits of the writes pushed
// events reported, and Recheck, when to look again at a write a reconcile
// could not see. Nil fields do nothing (a controller without the push
// path). Observe, when set, gets the duration and the final result of
// every reconcile that did not Skip.
type Bookkeeping struct {
	Tracker *Tracker
	Waits   *Waits
	Recheck time.Duration
	Observe func(took time.Duration, res ctrl.Result, err error)
}

// Reconcile runs reconcile for req inside the bookkeeping. Before it, the
// reconcile's start ends the hop the Tracker measures, and it takes the
// waits of req, which reach its reads through ctx (FromContext). After
// it, what it could not see goes back to the Waits and, unless it failed,
// its result looks again within Recheck (Pending.Finish).
func (b Bookkeeping) Reconcile(ctx context.Context, req ctrl.Request,
	reconcile func(context.Context, ctrl.Request) (ctrl.Result, error),
) (ctrl.Result, error) {
	start := time.Now()
	b.Tracker.Started(req.NamespacedName)
	pending := b.Waits.Take(req.NamespacedName)
	res, err := reconcile(NewContext(ctx, pending), req)
	finished := pending.Finish(res, b.Recheck)
	if err == nil {
		res = finished
	}
	if b.Observe != nil && !pending.skipped() {
		b.Observe(time.Since(start), res, err)
	}
	return res, err
}
