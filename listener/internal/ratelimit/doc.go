// Package ratelimit keeps a token bucket per runtime, so that one runtime
// that sends too many events is refused on its own instead of filling the
// queues that all runtimes share. Idle buckets are forgotten once they are
// full again, so memory follows the runtimes that were busy recently.
package ratelimit
