package schedule_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// TestCatalogAndAgentFollowTheKymaControllersOrder: the catalog and agent
// controllers see a Kyma only once the Kyma controller has taken it over.
func TestCatalogAndAgentFollowTheKymaControllersOrder(t *testing.T) {
	kyma := func(finalizer, synced bool, generation int64, labels map[string]string) *v1beta2.Kyma {
		k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "k", Generation: generation, Labels: labels}}
		if finalizer {
			k.Finalizers = []string{shared.KymaFinalizer}
		}
		if synced {
			k.Annotations = map[string]string{shared.LastSyncedSpecAnnotation: "h"}
		}
		return k
	}
	fresh, taken := kyma(false, false, 1, nil), kyma(true, true, 1, nil)
	p := schedule.TakenOverKymas()
	assert.False(t, p.Create(event.CreateEvent{Object: fresh}), "a new Kyma waits for the Kyma controller")
	assert.True(t, p.Create(event.CreateEvent{Object: taken}), "a Kyma taken over before a restart")
	assert.False(t, p.Create(event.CreateEvent{Object: kyma(true, false, 1, nil)}), "a finalizer alone (another operator's)")
	tests := []struct {
		name     string
		old, new *v1beta2.Kyma
		want     bool
	}{
		{"taken over now", fresh, taken, true},
		{"a spec change of a Kyma taken over", taken, kyma(true, true, 2, nil), true},
		{"a label change of a Kyma taken over", taken, kyma(true, true, 1, map[string]string{"a": "b"}), true},
		{"a status write", taken, kyma(true, true, 1, nil), false},
		{"a spec change before the take-over", fresh, kyma(false, false, 2, nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}))
		})
	}
}
