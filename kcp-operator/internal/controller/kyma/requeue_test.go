package kyma

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/api/v1beta2"
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
