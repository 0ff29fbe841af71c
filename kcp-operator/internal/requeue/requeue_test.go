package requeue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

func TestOnConflictRetriesQuicklyAndPassesOtherErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "operator.kyma-project.io", Resource: "kymas"}
	res, err := requeue.OnConflict(apierrors.NewConflict(gr, "kyma-1", errors.New("the object has been modified")))
	assert.NoError(t, err, "a conflict is no error")
	assert.Positive(t, res.RequeueAfter)
	assert.LessOrEqual(t, res.RequeueAfter, time.Second, "and is retried soon")

	other := errors.New("boom")
	res, err = requeue.OnConflict(other)
	assert.ErrorIs(t, err, other)
	assert.Zero(t, res.RequeueAfter)

	res, err = requeue.OnConflict(nil)
	assert.NoError(t, err)
	assert.Zero(t, res)
}
