// Package freshness lets a reconcile tell whether what it read of a
// runtime object already holds the write that a pushed event reported.
//
// The agent in a runtime is a validating admission webhook: the runtime's
// API server calls it before it stores the write, so the reconcile that
// the event starts may read the object as it was. Our agent sends the
// object's resourceVersion from before the write; a read that still shows
// it (or an older one) was early, and the reconcile reads again after a
// short backoff instead of finishing on stale data. Events without a
// version (the public agent's, creates, deletes) and waits a reconcile
// could not settle fall back to a timed second look.
package freshness
