package push_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/kcp-operator/internal/push"
)

type observed struct {
	calls int
	res   ctrl.Result
	err   error
}

func (o *observed) observe(_ time.Duration, res ctrl.Result, err error) {
	o.calls++
	o.res, o.err = res, err
}

// TestBookkeepingAroundAReconcile: the reconcile starts the tracked hop,
// reads its waits through its context, and what it did not see is looked
// at again, unless it failed or skipped.
func TestBookkeepingAroundAReconcile(t *testing.T) {
	const recheck = 2 * time.Second
	boom := errors.New("boom")
	tests := []struct {
		name        string
		reconcile   func(ctx context.Context) (ctrl.Result, error)
		wantRes     ctrl.Result
		wantErr     error
		wantKept    bool
		wantObserve bool
	}{
		{name: "sees the write: the result as it was", reconcile: func(ctx context.Context) (ctrl.Result, error) {
			read, _ := reads("6")
			return ctrl.Result{RequeueAfter: time.Hour}, push.FromContext(ctx).Read(ctx, kyma, read)
		}, wantRes: ctrl.Result{RequeueAfter: time.Hour}, wantObserve: true},
		{name: "did not read it: looked at again", reconcile: func(context.Context) (ctrl.Result, error) {
			return ctrl.Result{RequeueAfter: time.Hour}, nil
		}, wantRes: ctrl.Result{RequeueAfter: recheck}, wantKept: true, wantObserve: true},
		{name: "failed: the error's retry, the waits kept", reconcile: func(context.Context) (ctrl.Result, error) {
			return ctrl.Result{}, boom
		}, wantErr: boom, wantKept: true, wantObserve: true},
		{name: "skipped: the waits end, not observed", reconcile: func(ctx context.Context) (ctrl.Result, error) {
			push.FromContext(ctx).Skip()
			return ctrl.Result{}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waits, _ := newWaits(t, time.Now)
			tracker, err := push.NewTracker(prometheus.NewRegistry())
			require.NoError(t, err)
			tracker.Mark(req, time.Now())
			waits.Expect(req, kyma, "5", time.Now())
			var o observed
			bk := push.Bookkeeping{Tracker: tracker, Waits: waits, Recheck: recheck, Observe: o.observe}
			res, err := bk.Reconcile(t.Context(), ctrl.Request{NamespacedName: req}, func(ctx context.Context, r ctrl.Request) (ctrl.Result, error) {
				assert.Equal(t, req, r.NamespacedName)
				return tt.reconcile(ctx)
			})
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.wantRes.RequeueAfter, res.RequeueAfter)
			assert.Equal(t, tt.wantKept, waits.Count() == 1, "waits kept")
			_, measured := tracker.Last(req)
			assert.True(t, measured, "the reconcile's start ends the hop")
			assert.Equal(t, tt.wantObserve, o.calls == 1)
			if tt.wantObserve {
				assert.Equal(t, res, o.res, "observed as returned")
			}
		})
	}
}

func TestBookkeepingWithoutThePushPath(t *testing.T) {
	res, err := push.Bookkeeping{}.Reconcile(t.Context(), ctrl.Request{NamespacedName: req}, func(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
		assert.False(t, push.FromContext(ctx).Awaits(kyma))
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, time.Minute, res.RequeueAfter)
}
