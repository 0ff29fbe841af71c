package ratelimit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a fake time that tests move by hand.
type clock struct{ t atomic.Pointer[time.Time] }

func newClock() *clock {
	c := &clock{}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c.t.Store(&now)
	return c
}

func (c *clock) Now() time.Time { return *c.t.Load() }

func (c *clock) Advance(d time.Duration) {
	next := c.Now().Add(d)
	c.t.Store(&next)
}

func TestBurstAndRefill(t *testing.T) {
	type step struct {
		advance     time.Duration
		key         string
		wantAllowed bool
		wantWait    time.Duration
	}
	tests := []struct {
		name  string
		rate  float64
		burst int
		steps []step
	}{
		{
			name: "burst at once, then one token per 1/rate", rate: 2, burst: 3,
			steps: []step{
				{key: "a", wantAllowed: true},
				{key: "a", wantAllowed: true},
				{key: "a", wantAllowed: true},
				{key: "a", wantWait: 500 * time.Millisecond},
				{advance: 250 * time.Millisecond, key: "a", wantWait: 250 * time.Millisecond},
				{advance: 250 * time.Millisecond, key: "a", wantAllowed: true},
				{key: "a", wantWait: 500 * time.Millisecond},
			},
		},
		{
			name: "refill stops at the burst", rate: 10, burst: 2,
			steps: []step{
				{key: "a", wantAllowed: true},
				{key: "a", wantAllowed: true},
				{advance: time.Hour, key: "a", wantAllowed: true},
				{key: "a", wantAllowed: true},
				{key: "a", wantWait: 100 * time.Millisecond},
			},
		},
		{
			name: "keys do not share tokens", rate: 1, burst: 1,
			steps: []step{
				{key: "flooder", wantAllowed: true},
				{key: "flooder", wantWait: time.Second},
				{key: "quiet", wantAllowed: true},
				{key: "flooder", wantWait: time.Second},
			},
		},
		{
			name: "a very slow rate waits at most maxWait", rate: 1e-9, burst: 1,
			steps: []step{
				{key: "a", wantAllowed: true},
				{key: "a", wantWait: maxWait},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			l := New(tc.rate, tc.burst, c.Now)
			for i, s := range tc.steps {
				c.Advance(s.advance)
				v := l.Take(s.key)
				assert.Equal(t, s.wantAllowed, v.Allowed, "step %d", i)
				assert.InDelta(t, s.wantWait, v.Wait, float64(time.Microsecond), "step %d", i)
			}
		})
	}
}

func TestNegativeRateDisables(t *testing.T) {
	l := New(-1, 0, newClock().Now)
	require.Nil(t, l)
	for range 10000 {
		require.True(t, l.Take("flooder").Allowed)
	}
	assert.Zero(t, l.Len())
}

func TestReportsOneRefusalPerInterval(t *testing.T) {
	c := newClock()
	l := New(1, 1, c.Now)
	require.True(t, l.Take("a").Allowed)
	assert.True(t, l.Take("a").Report, "the first refusal")
	assert.False(t, l.Take("a").Report, "refused again at once")
	c.Advance(reportInterval - time.Second)
	require.True(t, l.Take("a").Allowed)
	assert.False(t, l.Take("a").Report, "within the interval")
	c.Advance(time.Second)
	require.True(t, l.Take("a").Allowed)
	assert.True(t, l.Take("a").Report, "an interval after the last report")
}

// TestSweepKeepsMemoryBounded lets runtimes come and go: every round,
// 1000 runtimes never seen before send one event each, then their buckets
// refill. The map must stay near the number of runtimes whose buckets are
// not full, never grow with the total.
func TestSweepKeepsMemoryBounded(t *testing.T) {
	c := newClock()
	l := New(10, 5, c.Now)
	refill := 100 * time.Millisecond // one token at 10/s
	most := 0
	for round := range 50 {
		for i := range 1000 {
			require.True(t, l.Take(fmt.Sprintf("rt-%d-%d", round, i)).Allowed)
			most = max(most, l.Len())
		}
		c.Advance(refill)
	}
	// A sweep runs when the map reaches sweepAt, which is at most twice
	// the buckets not yet full: here, those of the current round.
	assert.LessOrEqual(t, most, 2*1000)
	assert.Less(t, l.Len(), 2*1000)
}

// TestSweepKeepsBusyBuckets checks that 10,000 runtimes that are all busy
// keep their buckets through the sweeps their arrival causes, and that a
// drained bucket is not reset by a sweep.
func TestSweepKeepsBusyBuckets(t *testing.T) {
	c := newClock()
	l := New(1, 2, c.Now)
	require.True(t, l.Take("flooder").Allowed)
	require.True(t, l.Take("flooder").Allowed)
	for i := range 10000 {
		require.True(t, l.Take(fmt.Sprintf("rt-%d", i)).Allowed)
	}
	assert.Equal(t, 10001, l.Len(), "no bucket is full, none may go")
	assert.False(t, l.Take("flooder").Allowed, "still drained after the sweeps")

	c.Advance(2 * time.Second) // every bucket is full again
	// The map holds 10,001 buckets and sweeps at 16,384 (the doubling
	// after the sweeps at 1,024, 2,048, 4,096 and 8,192).
	newcomers := 8192
	for i := range newcomers {
		require.True(t, l.Take(fmt.Sprintf("new-%d", i)).Allowed)
	}
	assert.Equal(t, newcomers, l.Len(), "every full bucket was dropped, no busy one")
	assert.True(t, l.Take("flooder").Allowed)
}

func TestConcurrentTakesShareTheBurst(t *testing.T) {
	l := New(1, 100, newClock().Now) // the clock stands still: no refill
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if l.Take("rt").Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(100), allowed.Load())
}
