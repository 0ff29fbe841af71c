package forward

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffPause(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second}
	tests := []struct {
		failures   int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 0, 100 * time.Millisecond, 200 * time.Millisecond},
		{4, 0, 400 * time.Millisecond, 800 * time.Millisecond},
		{6, 0, time.Second, 2 * time.Second},
		{1000, 0, time.Second, 2 * time.Second},
		{1, 30 * time.Second, 30 * time.Second, 30 * time.Second},
		{1, time.Hour, maxRetryAfter, maxRetryAfter},
	}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := b.Pause(tt.failures, tt.retryAfter)
			assert.GreaterOrEqual(t, d, tt.lo, "failures %d", tt.failures)
			assert.LessOrEqual(t, d, tt.hi, "failures %d", tt.failures)
			seen[d] = true
		}
		if tt.retryAfter == 0 {
			assert.Greater(t, len(seen), 1, "jittered")
		}
	}
}
