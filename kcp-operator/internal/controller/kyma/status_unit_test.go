package kyma

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// TestAModuleIsReadyOnlyForTheObservedGeneration checks that a Manifest's
// Ready counts only once the Manifest controller reported on its current
// spec: right after a new version was applied its status is the old one's.
func TestAModuleIsReadyOnlyForTheObservedGeneration(t *testing.T) {
	manifest := func(generation, observedGeneration int64) *v1beta2.Manifest {
		return &v1beta2.Manifest{
			ObjectMeta: metav1.ObjectMeta{Name: "k-sample", Generation: generation},
			Status: v1beta2.ManifestStatus{State: shared.StateReady, Conditions: []metav1.Condition{
				{Type: v1beta2.ConditionInstallation, Status: metav1.ConditionTrue, ObservedGeneration: observedGeneration},
			}},
		}
	}
	for _, tc := range []struct {
		name     string
		manifest *v1beta2.Manifest
		want     shared.State
	}{
		{"observed", manifest(2, 2), shared.StateReady},
		{"new spec not observed yet", manifest(2, 1), shared.StateProcessing},
		{"no conditions yet", &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, shared.StateProcessing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := moduleStatus(moduleResult{listed: v1beta2.Module{Name: "sample"}, manifest: tc.manifest})
			assert.Equal(t, tc.want, ms.State)
		})
	}
}
