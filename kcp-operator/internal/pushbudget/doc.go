// Package pushbudget keeps one runtime's pushed work from crowding out the
// others' in the operator's controllers.
//
// Pushed requests go first in a controller's priority queue, so that a
// change someone just made does not wait behind background work. A
// runtime that pushes without pause (a module writing in a loop, or a
// compromised runtime) would then hold the workers for itself. Each
// runtime has a budget of pushed requests (a token bucket); beyond it, its
// requests are queued with the background work's priority: still
// reconciled, but after every other runtime's pushed changes. The
// listener's own limit per runtime bounds what arrives; this bounds the
// share of the workers that arrives with top priority.
package pushbudget
