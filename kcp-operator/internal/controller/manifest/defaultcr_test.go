package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func TestOwnsDefaultCROnlyOfTheGroupOfAnAppliedCRD(t *testing.T) {
	crd := func(name string) shared.Resource {
		return shared.Resource{Name: name, GroupVersionKind: metav1.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}}
	}
	cr := func(apiVersion, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName("default")
		return u
	}
	mf := &v1beta2.Manifest{Status: v1beta2.ManifestStatus{Synced: []shared.Resource{
		crd("scaledobjects.keda.sh"),
		crd("grants.rbac.authorization.k8s.io"),
		{Name: "config.other.io", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
	}}}
	cases := []struct {
		name string
		cr   *unstructured.Unstructured
		want bool
	}{
		{"the group of an applied CRD", cr("keda.sh/v1alpha1", "ScaledObject"), true},
		{"a Namespace", cr("v1", "Namespace"), false},
		{"a Kubernetes group an applied CRD claims", cr("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), false},
		{"a group only a ConfigMap's name ends in", cr("other.io/v1", "Other"), false},
		{"a group of no applied CRD", cr("istio.io/v1", "Istio"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ownsDefaultCR(mf, tc.cr))
		})
	}
	assert.False(t, ownsDefaultCR(&v1beta2.Manifest{}, cr("keda.sh/v1alpha1", "ScaledObject")), "a Manifest that applied nothing owns no default CR")
}
