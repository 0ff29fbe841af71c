// Package push holds the operator's bookkeeping of pushed events: what a
// reconcile that an event started has to know besides the event's object.
//
// KymaEvents maps an event to the Kyma of its runtime (with the lookups
// of internal/index) and notes it in the two records below.
//
// Tracker measures the push path's last hop, from the event reaching the
// listener to the start of the reconcile it enqueued.
//
// Waits lets a reconcile tell whether what it read of a runtime object
// already holds the write that a pushed event reported. The agent in a
// runtime is a validating admission webhook: the runtime's API server
// calls it before it stores the write, so the reconcile that the event
// starts may read the object as it was. Our agent sends the object's
// resourceVersion from before the write; a read that still shows it (or
// an older one) was early, and the reconcile reads again after a short
// backoff instead of finishing on stale data (Pending.Read). Events
// without a version (the public agent's, creates, deletes) and waits a
// reconcile could not settle fall back to a timed second look.
//
// Bookkeeping wraps a controller's reconcile in that: it ends the
// tracked hop, hands the reconcile its waits and, after it, asks for the
// second look of what the reconcile could not see.
//
// Budget keeps one runtime's pushed work from crowding out the others' in
// the operator's controllers. Pushed requests go first in a controller's
// priority queue, so that a change someone just made does not wait behind
// background work. A runtime that pushes without pause (a module writing
// in a loop, or a compromised runtime) would then hold the workers for
// itself. Each runtime has a budget of pushed requests (a token bucket);
// beyond it, its requests are queued with the background work's priority:
// still reconciled, but after every other runtime's pushed changes. The
// listener's own limit per runtime bounds what arrives; this bounds the
// share of the workers that arrives with top priority.
//
// Every record here is bounded in memory whatever runtimes send.
package push
