package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func moduleCR(status map[string]any) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.kyma-project.io/v1alpha1", "kind": "Sample",
		"metadata": map[string]any{"name": "default", "namespace": "kyma-system"},
	}}
	if status != nil {
		cr.Object["status"] = status
	}
	return cr
}

func TestCRState(t *testing.T) {
	tests := []struct {
		name    string
		status  map[string]any
		want    shared.State
		wantMsg string
	}{
		{"no status", nil, shared.StateProcessing, "has no status.state yet"},
		{"ready", map[string]any{"state": "Ready"}, shared.StateReady, "is Ready"},
		{"warning with reason", map[string]any{"state": "Warning", "conditions": []any{
			map[string]any{"type": "Installed", "status": "True", "message": "fine"},
			map[string]any{"type": "Quota", "status": "False", "message": "quota exceeded"},
		}}, shared.StateWarning, "reports Warning: quota exceeded"},
		{"error", map[string]any{"state": "Error"}, shared.StateError, "reports Error"},
		{"deleting", map[string]any{"state": "Deleting"}, shared.StateDeleting, "reports Deleting"},
		{"unknown state", map[string]any{"state": "Exploded"}, shared.StateWarning, `unknown state "Exploded"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msg, err := crState(moduleCR(tc.status))
			assert.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Contains(t, msg, tc.wantMsg)
			assert.Contains(t, msg, "Sample kyma-system/default")
		})
	}
}

func TestReadinessFold(t *testing.T) {
	tests := []struct {
		name      string
		hasCR     bool
		cr, work  shared.State
		wantState shared.State
		wantMsg   string
	}{
		{"no CR: workloads decide", false, "", shared.StateProcessing, shared.StateProcessing, "work"},
		{"no CR, workloads ready", false, "", shared.StateReady, shared.StateReady, "work"},
		{"CR decides", true, shared.StateWarning, shared.StateReady, shared.StateWarning, "cr"},
		{"CR ready but workloads not", true, shared.StateReady, shared.StateProcessing, shared.StateProcessing, "work"},
		{"both ready", true, shared.StateReady, shared.StateReady, shared.StateReady, "cr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obs := readiness(observation{}, tc.hasCR, tc.cr, "cr", tc.work, "work")
			assert.Equal(t, tc.wantState, obs.state)
			assert.Equal(t, tc.wantMsg, obs.message)
			assert.Equal(t, tc.wantState == shared.StateReady, meta.IsStatusConditionTrue(obs.conditions, v1beta2.ConditionInstallation) &&
				meta.IsStatusConditionTrue(obs.conditions, v1beta2.ConditionModuleCR))
		})
	}
}

func TestAppliedRecord(t *testing.T) {
	legacy := map[string]string{shared.AppliedAnnotation: "old/fp"}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		status      string
		want        string
	}{
		{"never applied", nil, "", ""},
		{"status", nil, "h/fp", "h/fp"},
		{"an operator before status.applied", legacy, "", "old/fp"},
		{"status wins over the old annotation", legacy, "h/fp", "h/fp"},
	} {
		mf := &v1beta2.Manifest{}
		mf.Annotations, mf.Status.Applied = tc.annotations, tc.status
		assert.Equal(t, tc.want, appliedRecord(mf), tc.name)
	}
}
