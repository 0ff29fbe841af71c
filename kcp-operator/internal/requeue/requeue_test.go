package requeue_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/requeue"
)

func TestIntervalsPerStateWithJitter(t *testing.T) {
	q := requeue.Requeue{Success: time.Hour, Busy: time.Second, Warning: time.Minute, Error: 10 * time.Second, Jitter: 0.1}
	tests := map[shared.State]time.Duration{
		shared.StateReady: time.Hour, shared.StateProcessing: time.Second, shared.StateDeleting: time.Second,
		shared.StateWarning: time.Minute, shared.StateError: 10 * time.Second,
	}
	for state, base := range tests {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := q.After(state).RequeueAfter
			assert.GreaterOrEqual(t, d, base, state)
			assert.LessOrEqual(t, d, base+base/10, state)
			seen[d] = true
		}
		assert.Greater(t, len(seen), 1, "%s: the jitter spreads the requeues", state)
	}
	assert.Equal(t, time.Hour, requeue.Requeue{Success: time.Hour}.After(shared.StateReady).RequeueAfter, "no jitter, no spread")
}
