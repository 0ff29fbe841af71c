package kyma

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/conditions"
)

// TestProgressReportsWaitForTheWriteThatEndsProcessing: a part done (the
// catalog synced, the agent ready) while a module still installs changes
// nothing a user acts on, so it rides along with the next write instead of
// costing one of its own; a problem, or the last part done, is written.
func TestProgressReportsWaitForTheWriteThatEndsProcessing(t *testing.T) {
	catalog := func(status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: v1beta2.ConditionModuleCatalog, Status: status, Reason: "Synced", Message: "m"}
	}
	module := func(state shared.State) []moduleResult {
		mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Name: "k-sample", Generation: 1}, Status: v1beta2.ManifestStatus{
			State:      state,
			Conditions: []metav1.Condition{{Type: v1beta2.ConditionInstallation, Status: metav1.ConditionTrue, ObservedGeneration: 1}},
		}}
		return []moduleResult{{listed: v1beta2.Module{Name: "sample"}, manifest: mf}}
	}
	tests := []struct {
		name      string
		installed shared.State
		report    metav1.Condition
		wantWrite bool
	}{
		{"catalog synced while the module installs: held", shared.StateProcessing, catalog(metav1.ConditionTrue), false},
		{"catalog failing while the module installs: written", shared.StateProcessing, catalog(metav1.ConditionFalse), true},
		{"catalog synced and the module ready: written, Ready", shared.StateReady, catalog(metav1.ConditionTrue), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Required: []string{v1beta2.ConditionModuleCatalog}, Board: conditions.NewBoard()}
			kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "k", Generation: 1}}
			kyma.Status = r.desiredStatus(kyma, module(shared.StateProcessing), nil)
			assert.Equal(t, shared.StateProcessing, kyma.Status.State)
			r.Board.Report(kyma, tc.report)
			got := r.statusToWrite(kyma, module(tc.installed))
			assert.Equal(t, tc.wantWrite, !sameStatus(got, kyma.Status), "write")
			if tc.installed == shared.StateReady {
				assert.Equal(t, shared.StateReady, got.State)
				assert.True(t, conditionTrue(got, v1beta2.ConditionModuleCatalog), "the held condition is in the Ready write")
			}
		})
	}
}

func conditionTrue(s v1beta2.KymaStatus, typ string) bool {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
