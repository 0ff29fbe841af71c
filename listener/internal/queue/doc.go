// Package queue is the bounded, coalescing hand-over between the listener's
// HTTP handlers and the consumer of one manager's events. Handlers never
// wait: an event is added, merged into a waiting event with the same key,
// or refused when the queue is full or nobody consumes it.
package queue
