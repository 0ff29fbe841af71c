package queue

import (
	"context"
	"errors"
	"sync"

	"github.com/lifecycle-manager/listener/event"
)

// Result says what Offer did with an event.
type Result int

// Results of Offer.
const (
	// Added: the event waits for the consumer.
	Added Result = iota
	// Coalesced: an event with the same key was waiting; the new one merged into it.
	Coalesced
	// Full: the queue holds its capacity of distinct keys; the event was refused.
	Full
	// NoConsumer: no consumer is attached; the event was refused, so that
	// nothing is accepted that nobody will deliver.
	NoConsumer
)

// ErrConsumerAttached is returned by Consume when the queue has a consumer already.
var ErrConsumerAttached = errors.New("the queue has a consumer already")

// Queue holds the events of one manager until its consumer takes them.
// The zero value is not usable; use New.
type Queue struct {
	capacity int
	// ready holds a token while events wait, so that the consumer wakes.
	ready chan struct{}

	mu        sync.Mutex
	events    []event.Event
	index     map[event.Key]int
	consuming bool
}

// New returns a queue that holds at most capacity distinct keys.
func New(capacity int) *Queue {
	return &Queue{
		capacity: capacity,
		ready:    make(chan struct{}, 1),
		index:    make(map[event.Key]int),
	}
}

// Offer hands over an event without blocking.
func (q *Queue) Offer(ev *event.Event) Result {
	k := ev.Key()
	q.mu.Lock()
	if !q.consuming {
		q.mu.Unlock()
		return NoConsumer
	}
	if i, ok := q.index[k]; ok {
		q.events[i].Merge(ev)
		q.mu.Unlock()
		return Coalesced
	}
	if len(q.events) >= q.capacity {
		q.mu.Unlock()
		return Full
	}
	q.index[k] = len(q.events)
	q.events = append(q.events, *ev)
	wake := len(q.events) == 1
	q.mu.Unlock()
	if wake {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return Added
}

// Len returns the number of waiting events.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events)
}

// Consuming reports whether a consumer is attached.
func (q *Queue) Consuming() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.consuming
}

// Consume attaches the caller as the queue's only consumer and passes it
// batches of waiting events, oldest first, until ctx ends. deliver runs on
// the caller's goroutine and must not keep the slice. A batch that was
// taken is delivered in full even when ctx ends meanwhile; events still
// waiting then stay for the next consumer.
func (q *Queue) Consume(ctx context.Context, deliver func([]event.Event)) error {
	q.mu.Lock()
	if q.consuming {
		q.mu.Unlock()
		return ErrConsumerAttached
	}
	q.consuming = true
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.consuming = false
		q.mu.Unlock()
	}()

	// Two sets of buffers take turns, so that steady traffic allocates nothing.
	spareEvents, spareIndex := make([]event.Event, 0, 64), make(map[event.Key]int)
	for ctx.Err() == nil {
		q.mu.Lock()
		batch, index := q.events, q.index
		if len(batch) > 0 {
			q.events, q.index = spareEvents, spareIndex
		}
		q.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-q.ready:
				continue
			}
		}
		deliver(batch)
		clear(batch) // drop the strings for the garbage collector
		clear(index)
		spareEvents, spareIndex = batch[:0], index
	}
	return nil
}
