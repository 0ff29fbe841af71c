package kyma

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// TestManifestChangesThatReachTheKyma checks which Manifest changes
// reconcile the Kyma: those that change what the Kyma says of the module,
// not each step of an install still under way.
func TestManifestChangesThatReachTheKyma(t *testing.T) {
	manifest := func(state shared.State, msg string) *v1beta2.Manifest {
		return &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Name: "k-sample", Generation: 1},
			Status: v1beta2.ManifestStatus{State: state, LastOperation: shared.LastOperation{Operation: msg}}}
	}
	deleted := manifest(shared.StateReady, "")
	deleted.DeletionTimestamp = &metav1.Time{}
	newSpec := manifest(shared.StateReady, "")
	newSpec.Generation = 2
	tests := []struct {
		name     string
		old, new *v1beta2.Manifest
		want     bool
	}{
		{"first apply: still Processing", manifest("", ""), manifest(shared.StateProcessing, "applying"), false},
		{"a step of the install", manifest(shared.StateProcessing, "applying"), manifest(shared.StateProcessing, "waiting for deployments"), false},
		{"ready", manifest(shared.StateProcessing, "waiting"), manifest(shared.StateReady, ""), true},
		{"a problem", manifest(shared.StateProcessing, "waiting"), manifest(shared.StateError, "denied"), true},
		{"another problem", manifest(shared.StateError, "denied"), manifest(shared.StateError, "timed out"), true},
		{"deleted", manifest(shared.StateReady, ""), deleted, true},
		{"a new spec", manifest(shared.StateReady, ""), newSpec, true},
		{"nothing the Kyma shows", manifest(shared.StateReady, ""), manifest(shared.StateReady, ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, manifestChanged().Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}))
		})
	}
}

func TestAManifestsCreationDoesNotReachTheKyma(t *testing.T) {
	assert.False(t, manifestChanged().Create(event.CreateEvent{Object: &v1beta2.Manifest{}}))
}

// TestKymaChangesThatReconcileIt checks that the Kyma controller's own
// takeover write does not reconcile the Kyma again, and users' label
// changes still do.
func TestKymaChangesThatReconcileIt(t *testing.T) {
	kyma := func(labels map[string]string) *v1beta2.Kyma {
		return &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "k", Generation: 1, Labels: labels}}
	}
	ours := map[string]string{shared.ManagedByLabel: shared.OperatorName}
	beta := map[string]string{shared.BetaLabel: "true"}
	betaAndOurs := map[string]string{shared.BetaLabel: "true", shared.ManagedByLabel: shared.OperatorName}
	tests := []struct {
		name     string
		old, new map[string]string
		want     bool
	}{
		{"taken over: our label added", nil, ours, false},
		{"taken over, users' labels kept", beta, betaAndOurs, false},
		{"a user's label added", ours, betaAndOurs, true},
		{"a user's label removed", betaAndOurs, ours, true},
		{"nothing", ours, ours, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, kymaChanged().Update(event.UpdateEvent{ObjectOld: kyma(tt.old), ObjectNew: kyma(tt.new)}))
		})
	}
}
