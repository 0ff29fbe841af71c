package skrwebhook

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
)

// TestStartingUp: what a new Kyma's first reconciles report and what they
// keep for later. Progress (a certificate being issued, an agent rolling
// out) is not reported on a new Kyma; errors and Kymas reported before are.
func TestStartingUp(t *testing.T) {
	const retry = 500 * time.Millisecond
	r := &Reconciler{Retry: retry}
	now := time.Now()
	kyma := func(age time.Duration, reported bool) *v1beta2.Kyma {
		k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-age))}}
		if reported {
			k.Status.Conditions = []metav1.Condition{{Type: v1beta2.ConditionSKRWebhook, Status: metav1.ConditionFalse, Reason: reasonNotReady}}
		}
		return k
	}
	cond := func(reason string) metav1.Condition { return metav1.Condition{Reason: reason} }
	tests := []struct {
		name   string
		kyma   *v1beta2.Kyma
		cond   metav1.Condition
		status agent.Status
		waits  bool
	}{
		{"new Kyma, certificate pending", kyma(time.Second, false), cond(reasonCertificatesPending), agent.Status{}, true},
		{"certificate pending past the grace", kyma(2*certificateGrace, false), cond(reasonCertificatesPending), agent.Status{}, false},
		{"certificate pending, reported before", kyma(time.Second, true), cond(reasonCertificatesPending), agent.Status{}, false},
		{"certificate error", kyma(time.Second, false), cond("CertificateError"), agent.Status{}, false},
		{"new agent rolling out", kyma(time.Second, false), cond(reasonNotReady), agent.Status{Created: now}, true},
		{"agent unavailable for long", kyma(time.Hour, false), cond(reasonNotReady), agent.Status{Created: now.Add(-time.Hour)}, false},
		{"agent unavailable, reported before", kyma(time.Second, true), cond(reasonNotReady), agent.Status{Created: now}, false},
		{"install error", kyma(time.Second, false), cond("InstallError"), agent.Status{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait := r.startingUp(tt.kyma, tt.cond, tt.status)
			if tt.waits {
				assert.Positive(t, wait, "kept for a later reconcile")
				assert.LessOrEqual(t, wait, retry+time.Second)
			} else {
				assert.Zero(t, wait, "reported now")
			}
		})
	}
}
