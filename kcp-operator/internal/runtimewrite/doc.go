// Package runtimewrite holds the small write helpers that the controllers
// writing into runtimes (and into the KCP) share: the operator's field
// owner, a short stable hash of an object's content for spec-hash
// annotations, a server-side apply of a typed object, a create for what is
// new, and an apply that, on an object the create made, first moves its
// fields to the operator's apply so that an apply prunes as it would have
// from the start.
package runtimewrite
