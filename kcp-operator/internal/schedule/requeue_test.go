package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/listener/eventsource"
)

func TestIntervalsPerStateWithJitter(t *testing.T) {
	q := schedule.Requeue{Success: time.Hour, Busy: time.Second, Warning: time.Minute, Error: 10 * time.Second, Jitter: 0.1}
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
	assert.Equal(t, time.Hour, schedule.Requeue{Success: time.Hour}.After(shared.StateReady).RequeueAfter, "no jitter, no spread")
}

// TestStuckWorkIsRecheckedLessOften: a module that stays Processing is read
// at Busy at first, then about half as long again each time, up to BusyMax;
// other states keep their interval whatever their age.
func TestStuckWorkIsRecheckedLessOften(t *testing.T) {
	q := schedule.Requeue{Success: time.Hour, Busy: 5 * time.Second, BusyMax: time.Minute, Warning: 2 * time.Minute, Error: time.Minute}
	tests := []struct {
		name      string
		state     shared.State
		unchanged time.Duration
		want      time.Duration
	}{
		{"just entered", shared.StateProcessing, 0, 5 * time.Second},
		{"younger than two Busy", shared.StateProcessing, 8 * time.Second, 5 * time.Second},
		{"half its age", shared.StateProcessing, 30 * time.Second, 15 * time.Second},
		{"deleting alike", shared.StateDeleting, 30 * time.Second, 15 * time.Second},
		{"capped", shared.StateProcessing, time.Hour, time.Minute},
		{"a clock step back", shared.StateProcessing, -time.Hour, 5 * time.Second},
		{"Ready keeps its resync", shared.StateReady, 10 * time.Hour, time.Hour},
		{"Warning keeps its interval", shared.StateWarning, 10 * time.Hour, 2 * time.Minute},
		{"Error keeps its interval", shared.StateError, 10 * time.Hour, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, q.AfterUnchanged(tt.state, tt.unchanged).RequeueAfter)
		})
	}
	noMax := schedule.Requeue{Busy: 5 * time.Second}
	assert.Equal(t, 5*time.Second, noMax.AfterUnchanged(shared.StateProcessing, time.Hour).RequeueAfter, "without BusyMax, every Busy")
}

func TestOnConflictRetriesQuicklyAndPassesOtherErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "operator.kyma-project.io", Resource: "kymas"}
	res, err := schedule.OnConflict(apierrors.NewConflict(gr, "kyma-1", errors.New("the object has been modified")))
	assert.NoError(t, err, "a conflict is no error")
	assert.Positive(t, res.RequeueAfter)
	assert.LessOrEqual(t, res.RequeueAfter, time.Second, "and is retried soon")

	other := errors.New("boom")
	res, err = schedule.OnConflict(other)
	assert.ErrorIs(t, err, other)
	assert.Zero(t, res.RequeueAfter)

	res, err = schedule.OnConflict(nil)
	assert.NoError(t, err)
	assert.Zero(t, res)
}

// TestWorkUnderWayGoesBeforeNewWork: a Manifest waiting for its workloads
// is rechecked before the next new Manifest is applied, so that a rollout
// finishes Kymas as it goes instead of applying everything first.
func TestWorkUnderWayGoesBeforeNewWork(t *testing.T) {
	q := schedule.Requeue{Success: time.Hour, Busy: time.Second, Warning: time.Minute, Error: 10 * time.Second, UnderWay: true}
	assert.Nil(t, schedule.Requeue{Busy: time.Second}.After(shared.StateProcessing).Priority, "only where asked for")
	for _, state := range []shared.State{shared.StateProcessing, shared.StateDeleting} {
		res := q.After(state)
		if assert.NotNil(t, res.Priority, state) {
			assert.Equal(t, schedule.UnderWayPriority, *res.Priority, state)
		}
	}
	for _, state := range []shared.State{shared.StateReady, shared.StateWarning, shared.StateError} {
		assert.Nil(t, q.After(state).Priority, "%s: a resync is no work under way", state)
	}

	pq := priorityqueue.New[reconcile.Request]("test")
	t.Cleanup(pq.ShutDown)
	recheck := reconcile.Request{NamespacedName: types.NamespacedName{Name: "applied-waiting"}}
	fresh := reconcile.Request{NamespacedName: types.NamespacedName{Name: "new"}}
	pq.Add(fresh)
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: schedule.UnderWay(0).Priority}, recheck)
	first, _, _ := pq.GetWithPriority()
	assert.Equal(t, recheck, first)
	assert.Less(t, schedule.UnderWayPriority, eventsource.Priority, "pushed changes still go first")
}

// TestStuckWorkWaitsBehindNewWork: work under way keeps its priority while
// its status moves; once it has stayed the same for BusyMax it is stuck (an
// image that cannot be pulled) and must not hold up new Manifests.
func TestStuckWorkWaitsBehindNewWork(t *testing.T) {
	q := schedule.Requeue{Busy: time.Second, BusyMax: time.Minute, UnderWay: true}
	tests := []struct {
		name      string
		q         schedule.Requeue
		unchanged time.Duration
		priority  bool
	}{
		{"just changed", q, 0, true},
		{"young", q, 30 * time.Second, true},
		{"stuck for BusyMax", q, time.Minute, false},
		{"stuck for an hour", q, time.Hour, false},
		{"without BusyMax only the first recheck", schedule.Requeue{Busy: time.Second, UnderWay: true}, time.Second, false},
		{"without BusyMax, just changed", schedule.Requeue{Busy: time.Second, UnderWay: true}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, state := range []shared.State{shared.StateProcessing, shared.StateDeleting} {
				got := tt.q.AfterUnchanged(state, tt.unchanged).Priority != nil
				assert.Equal(t, tt.priority, got, state)
			}
		})
	}
}
