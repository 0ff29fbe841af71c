package admission

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acquireLater starts an acquire and returns where its result arrives.
func acquireLater(ctx context.Context, b *budget, n int64, wait time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() { done <- b.acquire(ctx, n, wait) }()
	return done
}

func waiters(b *budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

func TestBudget(t *testing.T) {
	const long = time.Minute
	tests := []struct {
		name string
		run  func(t *testing.T, b *budget) // on a budget of 10
	}{
		{"takes what fits", func(t *testing.T, b *budget) {
			require.NoError(t, b.acquire(t.Context(), 4, long))
			require.NoError(t, b.acquire(t.Context(), 6, long))
			assert.Equal(t, int64(10), b.inUse())
		}},
		{"more than the whole budget never fits", func(t *testing.T, b *budget) {
			require.Error(t, b.acquire(t.Context(), 11, long))
			assert.Zero(t, waiters(b))
		}},
		{"a waiter gets in when enough is given back", func(t *testing.T, b *budget) {
			require.NoError(t, b.acquire(t.Context(), 10, long))
			done := acquireLater(t.Context(), b, 3, long)
			require.Eventually(t, func() bool { return waiters(b) == 1 }, 5*time.Second, time.Millisecond)
			b.release(2)
			assert.Equal(t, 1, waiters(b), "2 free is not enough for 3")
			b.release(1)
			require.NoError(t, <-done)
			assert.Equal(t, int64(10), b.inUse())
		}},
		{"a small one passes a large one that does not fit", func(t *testing.T, b *budget) {
			require.NoError(t, b.acquire(t.Context(), 8, long))
			large := acquireLater(t.Context(), b, 5, long)
			require.Eventually(t, func() bool { return waiters(b) == 1 }, 5*time.Second, time.Millisecond)
			require.NoError(t, b.acquire(t.Context(), 2, long))
			b.release(8)
			require.NoError(t, <-large)
			assert.Equal(t, int64(7), b.inUse())
		}},
		{"the wait is bounded", func(t *testing.T, b *budget) {
			require.NoError(t, b.acquire(t.Context(), 10, long))
			require.ErrorIs(t, b.acquire(t.Context(), 1, 10*time.Millisecond), errWaitedTooLong)
			assert.Zero(t, waiters(b), "a waiter that gave up is forgotten")
			b.release(10)
			assert.Zero(t, b.inUse())
		}},
		{"no wait left: only what fits at once", func(t *testing.T, b *budget) {
			require.NoError(t, b.acquire(t.Context(), 9, 0))
			require.ErrorIs(t, b.acquire(t.Context(), 2, 0), errWaitedTooLong)
			require.NoError(t, b.acquire(t.Context(), 1, -time.Second))
		}},
		{"the wait ends with the context", func(t *testing.T, b *budget) {
			require.NoError(t, b.acquire(t.Context(), 10, long))
			ctx, cancel := context.WithCancel(t.Context())
			done := acquireLater(ctx, b, 1, long)
			require.Eventually(t, func() bool { return waiters(b) == 1 }, 5*time.Second, time.Millisecond)
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
			assert.Zero(t, waiters(b))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newBudget(10)) })
	}
}
