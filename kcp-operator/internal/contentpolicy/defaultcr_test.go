package contentpolicy_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
)

// adminBinding is the default CR of a hostile publisher: cluster-admin for
// a ServiceAccount of its choosing.
func adminBinding() *unstructured.Unstructured {
	b := binding("ClusterRoleBinding", "keda-admin", "ClusterRole", "cluster-admin")
	b.Object["subjects"] = []any{map[string]any{"kind": "ServiceAccount", "name": "collector", "namespace": "default"}}
	return b
}

func TestCheckShipped(t *testing.T) {
	scaled := object("keda.sh/v1alpha1", "ScaledObject", "default", nil)
	tests := []struct {
		name    string
		cr      *unstructured.Unstructured
		objs    []*unstructured.Unstructured
		wantErr string // empty: shipped
	}{
		{name: "the module's kind", cr: scaled, objs: u(kedaCRD)},
		{name: "any version of the module's kind", cr: object("keda.sh/v2", "ScaledObject", "default", nil), objs: u(kedaCRD)},
		{name: "no default CR", objs: u(kedaCRD)},
		{name: "a ClusterRoleBinding", cr: adminBinding(), objs: u(kedaCRD),
			wantErr: "the default CR of module keda is refused: ClusterRoleBinding keda-admin is of kind rbac.authorization.k8s.io/ClusterRoleBinding, which no CRD of the module defines (the module's CRDs define ScaledObject.keda.sh)"},
		{name: "a Namespace", cr: object("v1", "Namespace", "kube-system", nil), objs: u(kedaCRD), wantErr: "of kind core/Namespace"},
		{name: "another kind of the module's group", cr: object("keda.sh/v1alpha1", "ScaledJob", "default", nil), objs: u(kedaCRD), wantErr: "keda.sh/ScaledJob"},
		{name: "the module's kind name in another group", cr: object("other.io/v1", "ScaledObject", "default", nil), objs: u(kedaCRD), wantErr: "other.io/ScaledObject"},
		{name: "a module without CRDs", cr: scaled, objs: u(object("v1", "ConfigMap", "keda", nil)), wantErr: "(the module's CRDs define none)"},
		{name: "a CRD that claims a Kubernetes kind", cr: adminBinding(), objs: u(kedaCRD, crd("rbac.authorization.k8s.io", "ClusterRoleBinding")),
			wantErr: "a CRD of the module defines it in Kubernetes' own API group rbac.authorization.k8s.io, which no module may claim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := contentpolicy.CheckShipped("keda", tc.cr, tc.objs)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			var notShipped *contentpolicy.NotShippedError
			require.True(t, errors.As(err, &notShipped), "a NotShippedError: %v", err)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestCheckDefaultCR: the rules judge a default CR as a rendered object of
// the module, and say that it is the default CR.
func TestCheckDefaultCR(t *testing.T) {
	policy, err := contentpolicy.Parse(contentpolicy.Defaults())
	require.NoError(t, err)
	err = policy.CheckDefaultCR("keda", adminBinding(), u(kedaCRD))
	var denied *contentpolicy.DeniedError
	require.True(t, errors.As(err, &denied), "a DeniedError: %v", err)
	assert.True(t, denied.DefaultCR)
	assert.EqualError(t, err, "the default CR of module keda is refused: ClusterRoleBinding keda-admin is denied by rule "+
		"rbac.authorization.k8s.io/ClusterRoleBinding:cluster-admin (its roleRef is the ClusterRole cluster-admin)")

	assertDenies(t, policy.CheckDefaultCR("keda", binding("ClusterRoleBinding", "keda", "ClusterRole", "keda-operator"), u(kedaCRD, wildRole)),
		map[string]string{"ClusterRoleBinding keda": "the module's ClusterRole keda-operator"})
	assert.NoError(t, policy.CheckDefaultCR("keda", object("keda.sh/v1alpha1", "ScaledObject", "default", nil), u(kedaCRD)))
	assert.NoError(t, policy.CheckDefaultCR("keda", nil, u(kedaCRD)))
	var none *contentpolicy.Policy
	assert.NoError(t, none.CheckDefaultCR("keda", adminBinding(), nil))
}
