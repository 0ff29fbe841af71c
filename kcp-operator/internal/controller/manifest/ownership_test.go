package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

func TestForeignOwner(t *testing.T) {
	ours := map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "beacon"}
	manager := func(name, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: name, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource}
	}
	tests := []struct {
		name     string
		labels   map[string]string
		managers []metav1.ManagedFieldsEntry
		adopt    bool
		want     string
	}{
		{name: "nobody's", want: ""},
		{name: "only the operator's field manager", managers: []metav1.ManagedFieldsEntry{manager(runtimewrite.FieldOwner, "")}, want: ""},
		{name: "this module's, edited by others", labels: ours,
			managers: []metav1.ManagedFieldsEntry{manager("kubectl-edit", ""), manager("kube-controller-manager", "")}, want: ""},
		{name: "a status writer owns no content", managers: []metav1.ManagedFieldsEntry{manager("kube-controller-manager", "status")}, want: ""},
		{name: "created by someone", managers: []metav1.ManagedFieldsEntry{manager(runtimewrite.FieldOwner, ""), manager("helm", "")},
			want: "field manager helm"},
		{name: "another tool's label", labels: map[string]string{shared.ManagedByLabel: "argocd"}, want: "label " + shared.ManagedByLabel + "=argocd"},
		{name: "another module", labels: map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "lighthouse"},
			want: "module lighthouse (label " + shared.ModuleNameLabel + "=lighthouse)"},
		{name: "the operator's runtime objects", labels: map[string]string{shared.ManagedByLabel: shared.OperatorName},
			managers: []metav1.ManagedFieldsEntry{manager(runtimewrite.FieldOwner, "")},
			want:     "the lifecycle manager's runtime objects (label " + shared.ManagedByLabel + "=" + shared.OperatorName + " without " + shared.ModuleNameLabel + ")"},
		{name: "adopted label", labels: map[string]string{shared.ManagedByLabel: "declarative-v2"},
			managers: []metav1.ManagedFieldsEntry{manager("kube-controller-manager", "")}, adopt: true, want: ""},
		{name: "adopted field manager", managers: []metav1.ManagedFieldsEntry{manager("declarative.kyma-project.io/applier", "")}, adopt: true, want: ""},
		{name: "adoption is for the listed only", labels: map[string]string{shared.ManagedByLabel: "argocd"}, adopt: true,
			want: "label " + shared.ManagedByLabel + "=argocd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Labels: tt.labels, ManagedFields: tt.managers}
			var adopt []string
			if tt.adopt {
				adopt = []string{"declarative-v2", "declarative.kyma-project.io/applier"}
			}
			assert.Equal(t, tt.want, foreignOwner(obj, "beacon", adopt))
		})
	}
}
