// Package queue holds the events waiting to be forwarded: a bounded FIFO
// that coalesces by event key, so that a burst of writes to one object, or
// any number of writes while the KCP is unreachable, costs one entry and one
// event. A key re-added while its event is in flight is sent once more
// afterwards, so that the KCP always sees the latest state. When the bound
// is reached the queue records the overflow and queues one resync key ahead
// of everything else, to ask the KCP for a full reconcile instead of the
// events it had to drop. A pause lets the sender back off from the KCP as a
// whole.
package queue
