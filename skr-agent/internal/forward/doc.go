// Package forward delivers queued events to the KCP in the background: a
// small pool of workers takes events from the queue and sends them; on a
// transport error, a 5xx or a 429 the event goes back to the queue and the
// whole queue pauses with exponential backoff and jitter (or for as long as
// Retry-After asks), because all events go to the same KCP; other 4xx are
// logged, counted and dropped. At shutdown it drains the queue for a bounded
// time. Nothing else is ever dropped: while the KCP is away, events wait,
// coalesced per object.
package forward
