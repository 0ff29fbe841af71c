// Package finalizer changes the finalizers of KCP objects safely.
//
// A JSON merge patch replaces a list as a whole. A finalizer patch made
// from a cached copy that missed another controller's (or a user's)
// finalizer would drop it, and with it that party's chance to clean up.
// The patches here carry the copy's resourceVersion, so a stale copy gets a
// conflict and the reconcile runs again with a fresh one.
package finalizer
