package queue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lifecycle-manager/skr-agent/internal/event"
)

// AddResult says what Add did with a key.
type AddResult int

const (
	// Added queued a new event.
	Added AddResult = iota
	// Coalesced found the key already waiting: its event will cover this change too.
	Coalesced
	// Overflowed dropped the change because the queue was full, and queued
	// the resync key instead (or found it already queued).
	Overflowed
)

// Item is an event handed out for delivery. Give it back with Done or Retry.
type Item struct {
	Key event.Key
	// OldResourceVersion is the version the event waits for: see
	// event.NewerVersion for how changes merge.
	OldResourceVersion string
	// Since is when the oldest change this event covers was queued.
	Since time.Time
	// Attempts counts the failed deliveries of this event so far.
	Attempts int
}

// entry is the state of one key; it is kept small because a backlog can
// hold hundreds of thousands of them.
type entry struct {
	key event.Key
	// version is that of the event still to hand out.
	version string
	// since is the age of the oldest undelivered change, relative to Queue.epoch.
	since time.Duration
	// dirtySince is set when the key is added again while in flight.
	dirtySince time.Duration
	dirty      bool
	inFlight   bool
	attempts   int32
}

// Queue is a bounded, coalescing FIFO of event keys. It is safe for
// concurrent use.
type Queue struct {
	capacity int
	resync   event.Key
	epoch    time.Time

	mu      sync.Mutex
	entries map[event.Key]*entry
	ready   ring
	// waiting counts keys with an event still to hand out: those in ready
	// plus those added again while in flight.
	waiting     int
	inFlight    int
	pausedUntil time.Time
	closed      bool
	// sleepers are the Gets blocked on changed; nobody to wake, nothing to allocate.
	sleepers int
	changed  chan struct{}
}

// New returns a queue that holds up to capacity waiting keys, and queues
// resync ahead of everything when a key does not fit.
func New(capacity int, resync event.Key) (*Queue, error) {
	if capacity < 1 {
		return nil, errors.New("queue capacity must be at least 1")
	}
	return &Queue{
		capacity: capacity, resync: resync, epoch: time.Now(),
		entries: map[event.Key]*entry{}, changed: make(chan struct{}),
	}, nil
}

// Add queues a change of the key's object; version is the object's
// resourceVersion before the change, "" when unknown.
func (q *Queue) Add(k event.Key, version string) AddResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Since(q.epoch)
	if e, ok := q.entries[k]; ok {
		if !e.inFlight || e.dirty {
			e.version = event.NewerVersion(e.version, version)
			return Coalesced
		}
		// The event in flight may have been read before this change: send once more.
		if q.waiting >= q.capacity {
			return q.overflow(now)
		}
		e.dirty, e.dirtySince, e.version = true, now, version
		q.waiting++
		return Added
	}
	if q.waiting >= q.capacity {
		return q.overflow(now)
	}
	e := &entry{key: k, since: now, version: version}
	q.entries[k] = e
	q.ready.pushBack(e)
	q.waiting++
	q.wake()
	return Added
}

// Resync queues the resync key as an overflow does, for changes that were
// dropped before they reached the queue (a review the webhook turned away).
func (q *Queue) Resync() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.overflow(time.Since(q.epoch))
}

// overflow queues the resync key, beyond the capacity if need be: it is the
// one event that stands for all the dropped ones.
func (q *Queue) overflow(now time.Duration) AddResult {
	e, ok := q.entries[q.resync]
	switch {
	case !ok:
		e = &entry{key: q.resync, since: now} // no version: the KCP reads the whole runtime
		q.entries[q.resync] = e
		q.ready.pushFront(e)
		q.waiting++
		q.wake()
	case e.inFlight && !e.dirty:
		e.dirty, e.dirtySince, e.version = true, now, ""
		q.waiting++
	}
	return Overflowed
}

// Get hands out the next event, waiting while the queue is empty or
// paused. It returns false when ctx ends, or when the queue is closed and
// nothing waits any more.
func (q *Queue) Get(ctx context.Context) (Item, bool) {
	for {
		// Checked first: a caller that gives an item back at once when its
		// context has ended would otherwise spin through the queue.
		if ctx.Err() != nil {
			return Item{}, false
		}
		q.mu.Lock()
		pause := time.Until(q.pausedUntil)
		if pause <= 0 {
			if e := q.ready.popFront(); e != nil {
				e.inFlight = true
				q.waiting--
				q.inFlight++
				it := Item{Key: e.key, OldResourceVersion: e.version, Since: q.epoch.Add(e.since), Attempts: int(e.attempts)}
				q.mu.Unlock()
				return it, true
			}
			if q.closed {
				q.mu.Unlock()
				return Item{}, false
			}
		}
		changed := q.changed
		q.sleepers++
		q.mu.Unlock()
		ok := sleep(ctx, changed, pause)
		q.mu.Lock()
		q.sleepers--
		q.mu.Unlock()
		if !ok {
			return Item{}, false
		}
	}
}

// sleep waits for a change, the end of a pause (when pause > 0) or ctx.
func sleep(ctx context.Context, changed <-chan struct{}, pause time.Duration) bool {
	var timeout <-chan time.Time
	if pause > 0 {
		t := time.NewTimer(pause)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-timeout:
	}
	return true
}

// Done gives back a delivered event, or one that will never be delivered.
// If the key was added again meanwhile, its event goes to the back of the
// queue (the resync key to the front).
func (q *Queue) Done(it Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.entries[it.Key]
	if !ok || !e.inFlight {
		return
	}
	e.inFlight = false
	q.inFlight--
	if !e.dirty {
		delete(q.entries, it.Key)
		return
	}
	e.since, e.dirty, e.attempts = e.dirtySince, false, 0
	// Already counted in waiting. The resync stands for dropped changes and
	// goes first, as when it was queued.
	if it.Key == q.resync {
		q.ready.pushFront(e)
	} else {
		q.ready.pushBack(e)
	}
	q.wake()
}

// Retry gives back an event that failed: it goes to the back of the queue,
// so that one event the KCP keeps refusing does not hold up the others.
func (q *Queue) Retry(it Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.entries[it.Key]
	if !ok || !e.inFlight {
		return
	}
	e.inFlight = false
	q.inFlight--
	if e.dirty {
		e.dirty = false // the retry covers the newer change too
		e.version = event.NewerVersion(it.OldResourceVersion, e.version)
	} else {
		q.waiting++
		e.version = it.OldResourceVersion
	}
	e.attempts++
	q.ready.pushBack(e)
	q.wake()
}

// Pause holds back every event until the given time, e.g. while the KCP
// asks to wait or cannot be reached. A shorter pause than the current one
// changes nothing.
func (q *Queue) Pause(until time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if until.After(q.pausedUntil) {
		q.pausedUntil = until
	}
}

// Close lets Get return false once nothing waits any more; Add still works,
// so that late changes are drained too.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.wake()
}

// Len is the number of events not yet delivered: waiting and in flight.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting + q.inFlight
}

// wake wakes every sleeping Get; the caller holds mu.
func (q *Queue) wake() {
	if q.sleepers == 0 {
		return
	}
	close(q.changed)
	q.changed = make(chan struct{})
}
