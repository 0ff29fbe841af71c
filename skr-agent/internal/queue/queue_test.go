package queue_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/queue"
)

var (
	cmGVK  = event.GVK{Version: "v1", Kind: "ConfigMap"}
	resync = event.NewKey("lifecycle-manager", event.KymaGVK, "kyma-system", "default")
)

func key(name string) event.Key { return event.NewKey("m", cmGVK, "ns", name) }

func newQueue(t *testing.T, capacity int) *queue.Queue {
	t.Helper()
	q, err := queue.New(capacity, resync)
	require.NoError(t, err)
	return q
}

// get takes the next item, failing the test instead of blocking forever.
func get(t *testing.T, q *queue.Queue) queue.Item {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	it, ok := q.Get(ctx)
	require.True(t, ok, "no item")
	return it
}

func TestNewRejectsNoCapacity(t *testing.T) {
	_, err := queue.New(0, resync)
	require.Error(t, err)
}

func TestAddCoalescesWaitingKeys(t *testing.T) {
	q := newQueue(t, 10)
	assert.Equal(t, queue.Added, q.Add(key("a"), ""))
	assert.Equal(t, queue.Added, q.Add(key("b"), ""))
	assert.Equal(t, queue.Coalesced, q.Add(key("a"), ""))
	assert.Equal(t, queue.Coalesced, q.Add(key("a"), ""))
	assert.Equal(t, 2, q.Len())

	first := get(t, q)
	assert.Equal(t, key("a"), first.Key, "FIFO: the first key added comes first")
	assert.Equal(t, key("b"), get(t, q).Key)
	q.Done(first)
	assert.Equal(t, 1, q.Len(), "b is still in flight")
}

func TestAddWhileInFlightSendsOnceMore(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "")
	it := get(t, q)
	assert.Equal(t, queue.Added, q.Add(key("a"), ""), "the event in flight may predate this change")
	assert.Equal(t, queue.Coalesced, q.Add(key("a"), ""))
	assert.Equal(t, 2, q.Len())

	q.Done(it)
	again := get(t, q)
	assert.Equal(t, key("a"), again.Key)
	assert.True(t, again.Since.After(it.Since), "the new event covers the change made in flight")
	q.Done(again)
	assert.Equal(t, 0, q.Len())
}

func TestRetryGoesToTheBackAndCounts(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "")
	q.Add(key("b"), "")
	a := get(t, q)
	q.Retry(a)
	b := get(t, q)
	assert.Equal(t, key("b"), b.Key)
	q.Done(b)
	a2 := get(t, q)
	assert.Equal(t, key("a"), a2.Key)
	assert.Equal(t, 1, a2.Attempts)
	assert.Equal(t, a.Since, a2.Since, "a retry keeps the age of the oldest change")

	assert.Equal(t, queue.Added, q.Add(key("a"), ""), "changed while in flight")
	q.Retry(a2)
	a3 := get(t, q)
	assert.Equal(t, 2, a3.Attempts)
	q.Done(a3)
	assert.Equal(t, 0, q.Len(), "the retry covered the change made in flight")
}

func TestDoneAfterARetriedChangeResetsAttempts(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "")
	q.Retry(get(t, q))
	it := get(t, q)
	require.Equal(t, 1, it.Attempts)
	q.Add(key("a"), "")
	q.Done(it)
	assert.Equal(t, 0, get(t, q).Attempts, "a new change is a new event")
}

func TestOverflowQueuesOneResyncFirst(t *testing.T) {
	q := newQueue(t, 2)
	q.Add(key("a"), "")
	q.Add(key("b"), "")
	assert.Equal(t, queue.Overflowed, q.Add(key("c"), ""))
	assert.Equal(t, queue.Overflowed, q.Add(key("d"), ""))
	assert.Equal(t, queue.Coalesced, q.Add(key("a"), ""), "waiting keys still coalesce")
	assert.Equal(t, 3, q.Len(), "a, b and the resync")

	first := get(t, q)
	assert.Equal(t, resync, first.Key, "the resync covers everything dropped, so it goes first")
	assert.Equal(t, queue.Overflowed, q.Add(key("e"), ""), "still full: a and b wait, the resync is in flight")
	q.Done(first)
	again := get(t, q)
	assert.Equal(t, resync, again.Key, "a change dropped while the resync was in flight needs another one")
	q.Done(again)
	assert.Equal(t, key("a"), get(t, q).Key)
	assert.Equal(t, key("b"), get(t, q).Key)
}

// TestResyncStandsForChangesThatNeverReachedTheQueue: the webhook queues the
// resync for a review it turned away, whatever the queue holds.
func TestResyncStandsForChangesThatNeverReachedTheQueue(t *testing.T) {
	tests := []struct {
		name     string
		prepare  func(q *queue.Queue) // before Resync
		wantLen  int                  // after Resync
		wantKeys []event.Key          // handed out afterwards, in order
	}{
		{"empty queue", func(*queue.Queue) {}, 1, []event.Key{resync}},
		{"ahead of waiting keys", func(q *queue.Queue) { q.Add(key("a"), "1") }, 2, []event.Key{resync, key("a")}},
		{"beyond a full queue", func(q *queue.Queue) { q.Add(key("a"), ""); q.Add(key("b"), "") }, 3,
			[]event.Key{resync, key("a"), key("b")}},
		{"once while one waits", func(q *queue.Queue) { q.Resync(); q.Add(key("a"), "") }, 2, []event.Key{resync, key("a")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue(t, 2)
			tt.prepare(q)
			q.Resync()
			assert.Equal(t, tt.wantLen, q.Len())
			for _, want := range tt.wantKeys {
				it := get(t, q)
				assert.Equal(t, want, it.Key)
				q.Done(it)
			}
			assert.Zero(t, q.Len())
		})
	}
}

func TestResyncWhileTheResyncIsInFlightSendsItOnceMore(t *testing.T) {
	q := newQueue(t, 2)
	q.Resync()
	first := get(t, q)
	q.Resync()
	q.Resync()
	q.Done(first)
	again := get(t, q)
	assert.Equal(t, resync, again.Key, "the resync in flight may have read the runtime before the change it now stands for")
	q.Done(again)
	assert.Zero(t, q.Len())
}

func TestPauseHoldsEventsBack(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "")
	const pause = 100 * time.Millisecond
	start := time.Now()
	q.Pause(start.Add(pause))
	q.Pause(start.Add(pause / 2)) // shorter: no effect
	get(t, q)
	assert.GreaterOrEqual(t, time.Since(start), pause)
}

func TestGetEndsWithContext(t *testing.T) {
	q := newQueue(t, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan bool)
	go func() {
		_, ok := q.Get(ctx)
		done <- ok
	}()
	cancel()
	assert.False(t, <-done)
}

func TestGetEndsWithContextEvenWithItemsReady(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, ok := q.Get(ctx)
	assert.False(t, ok, "an ended context wins over a ready item")
	assert.Equal(t, 1, q.Len())
}

func TestGetWakesOnAdd(t *testing.T) {
	q := newQueue(t, 10)
	got := make(chan event.Key)
	go func() {
		it, ok := q.Get(t.Context())
		if ok {
			got <- it.Key
		}
	}()
	require.Eventually(t, func() bool { return q.Sleepers() == 1 }, 5*time.Second, time.Millisecond)
	q.Add(key("a"), "")
	select {
	case k := <-got:
		assert.Equal(t, key("a"), k)
	case <-time.After(5 * time.Second):
		t.Fatal("Get did not wake up")
	}
}

func TestCloseDrainsThenEnds(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "")
	q.Close()
	assert.Equal(t, key("a"), get(t, q).Key)
	_, ok := q.Get(t.Context())
	assert.False(t, ok)
}

func TestCloseWakesSleepers(t *testing.T) {
	q := newQueue(t, 10)
	done := make(chan bool)
	go func() {
		_, ok := q.Get(t.Context())
		done <- ok
	}()
	require.Eventually(t, func() bool { return q.Sleepers() == 1 }, 5*time.Second, time.Millisecond)
	q.Close()
	select {
	case ok := <-done:
		assert.False(t, ok)
	case <-time.After(5 * time.Second):
		t.Fatal("Get did not return after Close")
	}
}

// TestEveryChangeIsDeliveredAfterItHappened runs producers and consumers
// concurrently and checks that each key was handed out after its last
// change: coalescing must never swallow a change.
func TestEveryChangeIsDeliveredAfterItHappened(t *testing.T) {
	const keys, producers, consumers, adds = 50, 4, 3, 2000
	q := newQueue(t, keys)
	var seq atomic.Int64
	var lastAdd, lastGet [keys]atomic.Int64

	var cwg sync.WaitGroup
	for range consumers {
		cwg.Go(func() {
			for {
				it, ok := q.Get(t.Context())
				if !ok {
					return
				}
				var i int
				_, _ = fmt.Sscanf(it.Key.Name, "k%d", &i)
				lastGet[i].Store(seq.Add(1))
				if seq.Load()%7 == 0 {
					q.Retry(it)
					continue
				}
				q.Done(it)
			}
		})
	}
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Go(func() {
			for n := range adds {
				i := (n*7 + p) % keys
				lastAdd[i].Store(seq.Add(1))
				require.NotEqual(t, queue.Overflowed, q.Add(key(fmt.Sprintf("k%d", i)), ""))
			}
		})
	}
	pwg.Wait()
	q.Close()
	cwg.Wait()
	for i := range keys {
		assert.Greater(t, lastGet[i].Load(), lastAdd[i].Load(), "key k%d: last change not delivered", i)
	}
	assert.Equal(t, 0, q.Len())
}

// TestTheEventWaitsForTheNewestWrite follows the version an event carries
// through merges, a change in flight and a retry.
func TestTheEventWaitsForTheNewestWrite(t *testing.T) {
	q := newQueue(t, 10)
	q.Add(key("a"), "10")
	assert.Equal(t, queue.Coalesced, q.Add(key("a"), "11"))
	it := get(t, q)
	assert.Equal(t, "11", it.OldResourceVersion, "a merged event waits for the newer write")

	q.Add(key("a"), "12") // while in flight
	q.Done(it)
	again := get(t, q)
	assert.Equal(t, "12", again.OldResourceVersion, "the resend carries the change made in flight")

	q.Add(key("a"), "13")
	q.Retry(again)
	retried := get(t, q)
	assert.Equal(t, "13", retried.OldResourceVersion, "the retry covers both")
	q.Done(retried)

	q.Add(key("b"), "20")
	q.Add(key("b"), "") // a delete, say
	assert.Empty(t, get(t, q).OldResourceVersion, "a change without a version leaves nothing to wait for")
}
