package removal_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
)

// TestOwnCROnlyOfTheGroupOfAnAppliedCRD: removal and purge delete a
// default CR only when a CRD the module applied is of its group, so that
// one the install refused never takes another's object with it.
func TestOwnCROnlyOfTheGroupOfAnAppliedCRD(t *testing.T) {
	crd := func(name string) shared.Resource {
		return shared.Resource{Name: name, GroupVersionKind: metav1.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}}
	}
	synced := []shared.Resource{
		crd("scaledobjects.keda.sh"),
		crd("grants.rbac.authorization.k8s.io"),
		{Name: "config.other.io", Namespace: "keda", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
	}
	manifest := func(apiVersion, kind string, synced []shared.Resource) *v1beta2.Manifest {
		cr := &unstructured.Unstructured{}
		cr.SetAPIVersion(apiVersion)
		cr.SetKind(kind)
		cr.SetName("default")
		cr.SetNamespace("keda") // the client is asked for the scope only without one
		return &v1beta2.Manifest{Spec: v1beta2.ManifestSpec{Resource: cr}, Status: v1beta2.ManifestStatus{Synced: synced}}
	}
	cases := []struct {
		name string
		mf   *v1beta2.Manifest
		want bool
	}{
		{"the group of an applied CRD", manifest("keda.sh/v1alpha1", "ScaledObject", synced), true},
		{"a Namespace", manifest("v1", "Namespace", synced), false},
		{"a Kubernetes group an applied CRD claims", manifest("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", synced), false},
		{"a group only a ConfigMap's name ends in", manifest("other.io/v1", "Other", synced), false},
		{"a group of no applied CRD", manifest("istio.io/v1", "Istio", synced), false},
		{"a Manifest that applied nothing", manifest("keda.sh/v1alpha1", "ScaledObject", nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, removal.OwnCR(tc.mf, nil, "kyma-system") != nil)
		})
	}
}
