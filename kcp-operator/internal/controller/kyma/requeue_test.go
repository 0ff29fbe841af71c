package kyma

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

func TestWithoutPushShortensTheResync(t *testing.T) {
	r := &Reconciler{RequeueNoPush: time.Minute, Required: []string{v1beta2.ConditionSKRWebhook}}
	agent := func(status metav1.ConditionStatus) v1beta2.KymaStatus {
		return v1beta2.KymaStatus{Conditions: []metav1.Condition{{Type: v1beta2.ConditionSKRWebhook, Status: status}}}
	}
	long := ctrl.Result{RequeueAfter: 30 * time.Minute}
	tests := []struct {
		name   string
		r      *Reconciler
		status v1beta2.KymaStatus
		in     ctrl.Result
		want   time.Duration
	}{
		{"agent ready: the long resync stays", r, agent(metav1.ConditionTrue), long, 30 * time.Minute},
		{"agent not ready: polling instead of push", r, agent(metav1.ConditionFalse), long, time.Minute},
		{"no agent reported yet", r, v1beta2.KymaStatus{}, long, time.Minute},
		{"a shorter requeue stays", r, agent(metav1.ConditionFalse), ctrl.Result{RequeueAfter: 5 * time.Second}, 5 * time.Second},
		{"push path off: nothing changes", &Reconciler{RequeueNoPush: time.Minute}, v1beta2.KymaStatus{}, long, 30 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.r.withoutPush(&v1beta2.Kyma{Status: tc.status}, tc.in).RequeueAfter)
		})
	}
}

// TestAProcessingKymaIsRecheckedWhenItsProgressTurnsWritable checks that a
// Kyma still Processing is read again when its held progress may be
// written (its stored status Requeue.BusyMax old), not every
// --requeue-busy: what it waits for comes as news.
func TestAProcessingKymaIsRecheckedWhenItsProgressTurnsWritable(t *testing.T) {
	r := &Reconciler{Requeue: schedule.Requeue{Success: time.Hour, Busy: 5 * time.Second, BusyMax: time.Minute, Error: 2 * time.Minute}}
	status := func(state shared.State, age time.Duration) v1beta2.KymaStatus {
		return v1beta2.KymaStatus{State: state, LastOperation: shared.LastOperation{
			LastUpdateTime: metav1.NewTime(time.Now().Add(-age))}}
	}
	tests := []struct {
		name     string
		status   v1beta2.KymaStatus
		min, max time.Duration
	}{
		{"Processing, just written: when it is a minute old", status(shared.StateProcessing, 0), 59 * time.Second, time.Minute},
		{"Processing, written 20 s ago: in 40 s", status(shared.StateProcessing, 20*time.Second), 39 * time.Second, 40 * time.Second},
		{"Processing for longer than the minute: the stuck recheck", status(shared.StateProcessing, 3*time.Minute), time.Minute, time.Minute},
		{"Ready: the success resync", status(shared.StateReady, 0), time.Hour, time.Hour},
		{"Error: the error retry", status(shared.StateError, 0), 2 * time.Minute, 2 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.recheck(&v1beta2.Kyma{}, tc.status).RequeueAfter
			assert.GreaterOrEqual(t, got, tc.min)
			assert.LessOrEqual(t, got, tc.max)
		})
	}
}
