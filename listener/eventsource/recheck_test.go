package eventsource_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/eventsource"
)

// oneEvent is a test double of the listener: it hands out one event.
type oneEvent struct{ ev event.Event }

func (oneEvent) CanConsume(string) error { return nil }

func (o oneEvent) Consume(ctx context.Context, _ string, deliver func(event.Event)) error {
	deliver(o.ev)
	<-ctx.Done()
	return nil
}

// TestRecheckEnqueuesAgainAfterTheDelay checks that with WithRecheck an
// event's request comes once at once and once more after the delay, and
// without it only once, in client-go's queue and in controller-runtime's
// priority queue (which merges waiting items with delayed adds).
func TestRecheckEnqueuesAgainAfterTheDelay(t *testing.T) {
	const delay = 200 * time.Millisecond
	queues := map[string]func() workqueue.TypedRateLimitingInterface[string]{
		"workqueue": func() workqueue.TypedRateLimitingInterface[string] {
			return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		},
		"priority queue": func() workqueue.TypedRateLimitingInterface[string] { return priorityqueue.New[string]("test") },
	}
	for queue, newQueue := range queues {
		awaitsVersions := eventsource.WithVersionWait(func(ev event.Event) bool { return ev.OldResourceVersion != "" })
		for _, tc := range []struct {
			name    string
			version string
			opts    []eventsource.Option
			want    int
		}{
			{"without recheck", "", nil, 1},
			{"with recheck", "", []eventsource.Option{eventsource.WithRecheck(delay)}, 2},
			{"with recheck, a version the consumer waits for", "42", []eventsource.Option{eventsource.WithRecheck(delay), awaitsVersions}, 1},
			{"with recheck, an event without a version", "", []eventsource.Option{eventsource.WithRecheck(delay), awaitsVersions}, 2},
		} {
			t.Run(queue+"/"+tc.name, func(t *testing.T) {
				q := newQueue()
				t.Cleanup(q.ShutDown)
				src := eventsource.NewTyped(oneEvent{ev: event.Event{RuntimeID: "runtime-1", OldResourceVersion: tc.version}}, "m",
					func(_ context.Context, ev event.Event) []string { return []string{ev.RuntimeID} }, tc.opts...)
				require.NoError(t, src.Start(t.Context(), q))
				got := handOut(q)
				first := <-got
				if tc.want == 1 {
					select {
					case <-got:
						t.Fatal("enqueued a second time without recheck")
					case <-time.After(3 * delay):
					}
					return
				}
				select {
				case second := <-got:
					assert.GreaterOrEqual(t, second.Sub(first), delay-10*time.Millisecond, "the second request waits for the delay")
				case <-time.After(10 * delay):
					t.Fatal("the recheck never came")
				}
			})
		}
	}
}

// handOut gets items from q like a controller's worker and reports when.
func handOut(q workqueue.TypedRateLimitingInterface[string]) <-chan time.Time {
	got := make(chan time.Time, 4)
	go func() {
		for {
			item, shutdown := q.Get()
			if shutdown {
				return
			}
			got <- time.Now()
			q.Done(item)
		}
	}()
	return got
}

// TestPushedRequestsGoBeforeBackgroundWork checks that in controller-runtime's
// priority queue a pushed request is handed out before requests that were
// waiting already with the default priority.
func TestPushedRequestsGoBeforeBackgroundWork(t *testing.T) {
	q := priorityqueue.New[string]("test")
	t.Cleanup(q.ShutDown)
	for _, background := range []string{"release-1", "release-2", "release-3"} {
		q.Add(background)
	}
	src := eventsource.NewTyped(oneEvent{ev: event.Event{RuntimeID: "pushed"}}, "m",
		func(_ context.Context, ev event.Event) []string { return []string{ev.RuntimeID} })
	require.NoError(t, src.Start(t.Context(), q))
	require.Eventually(t, func() bool { return q.Len() == 4 }, 5*time.Second, 10*time.Millisecond)

	item, priority, _ := q.GetWithPriority()
	assert.Equal(t, "pushed", item)
	assert.Equal(t, eventsource.Priority, priority)
}

// TestWithPriorityOrdersTheRequests: a request whose priority function
// demotes it to the background work's priority waits behind requests that
// were queued with a higher one.
func TestWithPriorityOrdersTheRequests(t *testing.T) {
	q := priorityqueue.New[string]("test")
	t.Cleanup(q.ShutDown)
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(0)}, "ordinary")
	src := eventsource.NewTyped(oneEvent{ev: event.Event{RuntimeID: "flooder"}}, "m",
		func(_ context.Context, ev event.Event) []string { return []string{ev.RuntimeID} },
		eventsource.WithPriority(func(event.Event) int { return -100 }))
	require.NoError(t, src.Start(t.Context(), q))
	require.Eventually(t, func() bool { return q.Len() == 2 }, 5*time.Second, 10*time.Millisecond)
	first, _, _ := q.GetWithPriority()
	assert.Equal(t, "ordinary", first)
	second, priority, _ := q.GetWithPriority()
	assert.Equal(t, "flooder", second)
	assert.Equal(t, -100, priority)
}

// TestRecheckFromAChannelSourceHandler enqueues through controller-runtime's
// Channel source, as the operator's drift events do: its handler's context
// ends when the handler returns, long before the recheck is due, and the
// recheck must come all the same.
func TestRecheckFromAChannelSourceHandler(t *testing.T) {
	const delay = 200 * time.Millisecond
	q := priorityqueue.New[string]("test")
	t.Cleanup(q.ShutDown)
	events := make(chan ctrlevent.TypedGenericEvent[string], 1)
	src := source.TypedChannel[string, string](events, handler.TypedFuncs[string, string]{
		GenericFunc: func(_ context.Context, e ctrlevent.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[string]) {
			eventsource.EnqueueWithRecheck(q, e.Object, delay)
		},
	})
	require.NoError(t, src.Start(t.Context(), q))
	events <- ctrlevent.TypedGenericEvent[string]{Object: "manifest-1"}
	got := handOut(q)
	first := <-got
	select {
	case second := <-got:
		assert.GreaterOrEqual(t, second.Sub(first), delay-10*time.Millisecond)
	case <-time.After(10 * delay):
		t.Fatal("the recheck never came")
	}
}
