package conditionboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/conditionboard"
)

func kymaWith(conds ...metav1.Condition) *v1beta2.Kyma {
	k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "k", Generation: 3}}
	k.Status.Conditions = conds
	return k
}

func synced(status metav1.ConditionStatus, msg string) metav1.Condition {
	return metav1.Condition{Type: v1beta2.ConditionModuleCatalog, Status: status, Reason: "Synced", Message: msg}
}

func started(t *testing.T, b *conditionboard.Board) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	require.NoError(t, b.Source().Start(context.Background(), q))
	return q
}

func TestReportEnqueuesOnlyWhatChanges(t *testing.T) {
	tests := []struct {
		name    string
		status  []metav1.Condition
		reports []metav1.Condition
		want    int
	}{
		{"first report", nil, []metav1.Condition{synced(metav1.ConditionTrue, "ok")}, 1},
		{"the status says so already (after a restart)", []metav1.Condition{synced(metav1.ConditionTrue, "ok")},
			[]metav1.Condition{synced(metav1.ConditionTrue, "ok")}, 0},
		{"the same report twice", nil, []metav1.Condition{synced(metav1.ConditionTrue, "ok"), synced(metav1.ConditionTrue, "ok")}, 1},
		{"a changed message", nil, []metav1.Condition{synced(metav1.ConditionTrue, "ok"), synced(metav1.ConditionFalse, "down")}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := conditionboard.NewBoard()
			q := started(t, b)
			adds := 0
			for _, c := range tc.reports {
				before := q.Len()
				b.Report(kymaWith(tc.status...), c)
				if q.Len() > before {
					adds++
				}
				for q.Len() > 0 { // the controller takes it
					item, _ := q.Get()
					q.Done(item)
				}
			}
			assert.Equal(t, tc.want, adds)
		})
	}
}

func TestReportsBeforeTheStartAreEnqueuedAtIt(t *testing.T) {
	b := conditionboard.NewBoard()
	b.Report(kymaWith(), synced(metav1.ConditionTrue, "ok"))
	q := started(t, b)
	require.Equal(t, 1, q.Len())
	item, _ := q.Get()
	assert.Equal(t, "k", item.Name)
}

func TestMergedKeepsTransitionTimesOfUnchangedConditions(t *testing.T) {
	then := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	stored := synced(metav1.ConditionTrue, "ok")
	stored.LastTransitionTime, stored.ObservedGeneration = then, 1
	tests := []struct {
		name     string
		report   metav1.Condition
		wantNews int
		wantTime func(metav1.Time) bool
	}{
		{"same: kept as stored", synced(metav1.ConditionTrue, "ok"), 0, sameTime(then)},
		{"new message, same status: the transition time stays", synced(metav1.ConditionTrue, "other"), 1, sameTime(then)},
		{"new status: the transition is now", synced(metav1.ConditionFalse, "down"), 1,
			func(tm metav1.Time) bool { return tm.After(then.Time) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := conditionboard.NewBoard()
			k := kymaWith(stored)
			b.Report(k, tc.report)
			conds, news := b.Merged(k)
			require.Len(t, conds, 1)
			assert.Len(t, news, tc.wantNews)
			assert.Equal(t, tc.report.Message, conds[0].Message)
			assert.True(t, tc.wantTime(conds[0].LastTransitionTime), "transition time %s", conds[0].LastTransitionTime)
			if tc.wantNews > 0 {
				assert.Equal(t, int64(3), conds[0].ObservedGeneration)
			}
			assert.Equal(t, "ok", k.Status.Conditions[0].Message, "the Kyma's own status is not touched")
		})
	}
}

func TestForgetDropsReportsAndNilBoardHoldsNothing(t *testing.T) {
	b := conditionboard.NewBoard()
	k := kymaWith()
	b.Report(k, synced(metav1.ConditionTrue, "ok"))
	require.NotNil(t, b.Find(k, v1beta2.ConditionModuleCatalog))
	b.Forget(types(k))
	assert.Nil(t, b.Find(k, v1beta2.ConditionModuleCatalog))

	var none *conditionboard.Board
	none.Report(k, synced(metav1.ConditionTrue, "ok"))
	conds, news := none.Merged(k)
	assert.Empty(t, conds)
	assert.Empty(t, news)
}

func types(k *v1beta2.Kyma) k8stypes.NamespacedName {
	return k8stypes.NamespacedName{Namespace: k.Namespace, Name: k.Name}
}

func sameTime(want metav1.Time) func(metav1.Time) bool {
	return func(got metav1.Time) bool { return got.Equal(&want) }
}

// TestSettleDelaysOnlyWorkDone checks that a report of work done waits for
// the settle time, to join the Kyma's other news, and a problem does not.
func TestSettleDelaysOnlyWorkDone(t *testing.T) {
	b := conditionboard.NewBoard()
	b.Settle = time.Hour
	q := started(t, b)
	b.Report(kymaWith(), synced(metav1.ConditionTrue, "ok"))
	assert.Zero(t, q.Len(), "a part done waits")
	b.Report(kymaWith(), synced(metav1.ConditionFalse, "down"))
	assert.Equal(t, 1, q.Len(), "a problem is taken up at once")
}
