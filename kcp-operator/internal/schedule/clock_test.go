package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func newQueue(t *testing.T) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	return q
}

// TestPacerSlowsDownWithItsPace checks that a fan-out under way follows
// the pace: at half pace its Kymas come half as fast, and back at full
// pace as fast as before, none skipped or doubled.
func TestPacerSlowsDownWithItsPace(t *testing.T) {
	p, clock := newTestPacer(Pace{Rate: 2})
	q := newQueue(t)
	p.Enqueue(q, kymaKeys("kyma", 4))
	assert.Equal(t, 1, q.Len(), "the first Kyma's time is now")
	assert.Equal(t, 500*time.Millisecond, p.dispatch(), "at full pace the next is due in 0.5 s")

	p.SetPace(0.5)
	assert.Equal(t, time.Second, p.dispatch(), "at half pace the next is due in 1 s")
	assert.Equal(t, 3*time.Second, p.Backlog(), "the last Kyma is 1.5 s away on the Pacer's clock, 3 s at half pace")
	clock.advance(500 * time.Millisecond)
	p.dispatch()
	assert.Equal(t, 1, q.Len(), "0.5 s later, at half pace, the second Kyma is not due yet")
	clock.advance(500 * time.Millisecond)
	assert.Equal(t, time.Second, p.dispatch())
	assert.Equal(t, 2, q.Len(), "1 s later it is")

	p.SetPace(1)
	clock.advance(500 * time.Millisecond)
	assert.Equal(t, 500*time.Millisecond, p.dispatch())
	assert.Equal(t, 3, q.Len(), "back at full pace: one every 0.5 s")
	clock.advance(500 * time.Millisecond)
	assert.Equal(t, time.Duration(-1), p.dispatch(), "nothing left")
	assert.Equal(t, 4, q.Len())
}

// TestPacerPaceBounds checks that a pace of 0 or less is ignored (the
// clock would stop, or run back) and one above 1 is 1.
func TestPacerPaceBounds(t *testing.T) {
	p, _ := newTestPacer(Pace{Rate: 1})
	q := newQueue(t)
	p.Enqueue(q, kymaKeys("kyma", 2))
	p.SetPace(0)
	p.SetPace(-1)
	assert.Equal(t, time.Second, p.dispatch())
	p.SetPace(4)
	assert.Equal(t, time.Second, p.dispatch())
}

// TestPacerStartEnqueuesWhenDue runs the Pacer's clock for real: every
// Kyma of a fan-out reaches the queue once, a Kyma asked for again
// included.
func TestPacerStartEnqueuesWhenDue(t *testing.T) {
	p := NewPacer(Pace{Rate: 50})
	q := newQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Start(ctx) }()
	keys := kymaKeys("kyma", 5)
	p.Enqueue(q, keys)
	p.Enqueue(q, keys[3:])
	require.Eventually(t, func() bool { return q.Len() == 5 }, 10*time.Second, 10*time.Millisecond)
	p.mu.Lock()
	assert.Zero(t, p.due.Len())
	p.mu.Unlock()
	cancel()
	require.NoError(t, <-done)
}
