package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/internal/queue"
)

func ev(runtime, name string) *event.Event {
	return &event.Event{
		RuntimeID: runtime, Manager: "klm", Contract: event.ContractV2,
		Object:   types.NamespacedName{Namespace: "kyma-system", Name: name},
		GVK:      schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"},
		Received: time.Now(),
	}
}

// attach starts a consumer that sends every batch (copied) to the returned
// channel, and waits until it is attached.
func attach(t *testing.T, q *queue.Queue) (<-chan []event.Event, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out := make(chan []event.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- q.Consume(ctx, func(b []event.Event) { out <- append([]event.Event(nil), b...) })
	}()
	require.Eventually(t, q.Consuming, 5*time.Second, time.Millisecond)
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	return out, cancel
}

func TestOfferWithoutConsumerIsRefused(t *testing.T) {
	q := queue.New(10)
	assert.Equal(t, queue.NoConsumer, q.Offer(ev("rt-1", "a")))
	assert.Equal(t, 0, q.Len())
}

func TestCoalescesAndBounds(t *testing.T) {
	q := queue.New(2)
	ctx, cancel := context.WithCancel(t.Context())
	// Attach a consumer that blocks on its first batch, so that events pile up.
	release := make(chan struct{})
	batches := make(chan []event.Event, 10)
	go func() {
		_ = q.Consume(ctx, func(b []event.Event) {
			batches <- append([]event.Event(nil), b...)
			<-release
		})
	}()
	defer cancel()
	require.Eventually(t, q.Consuming, 5*time.Second, time.Millisecond)

	require.Equal(t, queue.Added, q.Offer(ev("rt-0", "first")))
	first := <-batches // the consumer holds this batch until released

	a := ev("rt-1", "a")
	a.OldResourceVersion = "20"
	require.Equal(t, queue.Added, q.Offer(a))
	later := ev("rt-1", "a")
	later.Contract = event.ContractV1
	later.Received = a.Received.Add(time.Second)
	later.OldResourceVersion = "21"
	assert.Equal(t, queue.Coalesced, q.Offer(later), "same key")
	assert.Equal(t, queue.Added, q.Offer(ev("rt-2", "a")), "other runtime, other key")
	assert.Equal(t, queue.Full, q.Offer(ev("rt-3", "a")), "capacity of distinct keys reached")
	assert.Equal(t, queue.Coalesced, q.Offer(ev("rt-2", "a")), "merging needs no room")
	assert.Equal(t, 2, q.Len())

	close(release)
	second := <-batches
	assert.Len(t, first, 1)
	require.Len(t, second, 2)
	assert.Equal(t, "rt-1", second[0].RuntimeID, "oldest first")
	assert.Equal(t, a.Received, second[0].Received, "coalesced event keeps the first received time")
	assert.Equal(t, event.ContractV1, second[0].Contract, "and takes the latest contract")
	assert.Equal(t, "21", second[0].OldResourceVersion, "and waits for the newer write")
	assert.Equal(t, "rt-2", second[1].RuntimeID)
	require.Eventually(t, func() bool { return q.Len() == 0 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, queue.Added, q.Offer(ev("rt-1", "a")), "a delivered key is new again")
}

func TestOneConsumerAtATime(t *testing.T) {
	q := queue.New(10)
	_, cancel := attach(t, q)
	assert.ErrorIs(t, q.Consume(t.Context(), func([]event.Event) {}), queue.ErrConsumerAttached)
	cancel()
	require.Eventually(t, func() bool { return !q.Consuming() }, 5*time.Second, time.Millisecond)
	assert.Equal(t, queue.NoConsumer, q.Offer(ev("rt-1", "a")), "a detached queue refuses events")
}

// TestConcurrentProducersLoseNothing offers from many goroutines and checks
// that every distinct key arrives, and no key arrives more often than it
// was offered.
func TestConcurrentProducersLoseNothing(t *testing.T) {
	q := queue.New(1 << 16)
	const producers, perProducer = 16, 500
	var mu sync.Mutex
	seen := map[event.Key]int{}
	total := 0
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Consume(ctx, func(b []event.Event) {
			mu.Lock()
			defer mu.Unlock()
			for i := range b {
				seen[b[i].Key()]++
				total++
			}
		})
	}()
	require.Eventually(t, q.Consuming, 5*time.Second, time.Millisecond)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProducer {
				// Each producer repeats every key twice in a row.
				r := q.Offer(ev(fmt.Sprintf("rt-%d", p), fmt.Sprintf("obj-%d", i/2)))
				assert.NotEqual(t, queue.Full, r)
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == producers*perProducer/2
	}, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	for k, n := range seen {
		assert.LessOrEqual(t, n, 2, "key %v", k)
	}
	assert.LessOrEqual(t, total, producers*perProducer)
}

func BenchmarkOffer(b *testing.B) {
	q := queue.New(1 << 20)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	go func() { _ = q.Consume(ctx, func([]event.Event) {}) }()
	for !q.Consuming() {
		time.Sleep(time.Millisecond)
	}
	events := make([]*event.Event, 1024)
	for i := range events {
		events[i] = ev(fmt.Sprintf("rt-%d", i), "default")
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			q.Offer(events[i%len(events)])
			i++
		}
	})
}
