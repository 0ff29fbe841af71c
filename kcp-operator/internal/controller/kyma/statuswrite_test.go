package kyma

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/conditionboard"
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
			r := &Reconciler{Required: []string{v1beta2.ConditionModuleCatalog}, Board: conditionboard.NewBoard()}
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

func TestOnlyProgressIsHeldBack(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "R", Message: msg}
	}
	base := func() v1beta2.KymaStatus {
		return v1beta2.KymaStatus{State: shared.StateProcessing,
			Modules: []v1beta2.ModuleStatus{{Name: "a", State: shared.StateProcessing, Message: "applied"},
				{Name: "b", State: shared.StateProcessing, Message: "applied"}},
			Conditions:    []metav1.Condition{cond(v1beta2.ConditionModules, metav1.ConditionFalse, "a, b"), cond(v1beta2.ConditionSKRWebhook, metav1.ConditionFalse, "starting")},
			LastOperation: shared.LastOperation{Operation: "waiting for modules: a (Processing)"}}
	}
	// held: whether the change waits while the stored status is young
	// (younger than Requeue.BusyMax), and once it is old.
	tests := []struct {
		name            string
		change          func(*v1beta2.KymaStatus)
		heldYoung, held bool
	}{
		{"nothing changed", func(*v1beta2.KymaStatus) {}, true, true},
		{"a module's message while it stays Processing", func(s *v1beta2.KymaStatus) {
			s.Modules[0].Message = "waiting for Deployment x"
		}, true, false},
		{"a part reported done for the first time", func(s *v1beta2.KymaStatus) {
			s.Conditions = append(s.Conditions, cond(v1beta2.ConditionModuleCatalog, metav1.ConditionTrue, "synced"))
		}, true, true},
		{"a module Ready while another installs", func(s *v1beta2.KymaStatus) {
			s.Modules[0].State, s.Modules[0].Message = shared.StateReady, ""
			s.Conditions[0].Message = "b"
		}, true, false},
		{"a module failing", func(s *v1beta2.KymaStatus) { s.Modules[0].State = shared.StateError }, false, false},
		{"a module's version", func(s *v1beta2.KymaStatus) { s.Modules[0].Version = "1.0.1" }, false, false},
		{"a part recovering", func(s *v1beta2.KymaStatus) { s.Conditions[1].Status = metav1.ConditionTrue }, false, false},
		{"a part failing anew", func(s *v1beta2.KymaStatus) { s.Conditions[1].Message = "unreachable" }, false, false},
		{"the Kyma's state", func(s *v1beta2.KymaStatus) { s.State = shared.StateError }, false, false},
		{"a module added", func(s *v1beta2.KymaStatus) {
			s.Modules = append(s.Modules, v1beta2.ModuleStatus{Name: "c", State: shared.StateProcessing})
		}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := base()
			next.Modules = append([]v1beta2.ModuleStatus(nil), next.Modules...)
			next.Conditions = append([]metav1.Condition(nil), next.Conditions...)
			tc.change(&next)
			assert.Equal(t, tc.heldYoung, progressOnly(base(), next, true), "young")
			assert.Equal(t, tc.held, progressOnly(base(), next, false), "old")
		})
	}
	done := base()
	done.Conditions[1].Status = metav1.ConditionTrue
	failing := done
	failing.Conditions = append([]metav1.Condition(nil), done.Conditions...)
	failing.Conditions[1].Status = metav1.ConditionFalse
	assert.False(t, progressOnly(done, failing, true), "a part that was done and fails is written")
}
