package v1beta1_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
)

// docTemplate is the original documentation's simplified ModuleTemplate.
func docTemplate() *v1beta1.ModuleTemplate {
	return &v1beta1.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "moduletemplate-sample", Namespace: "default",
			Labels: map[string]string{shared.ModuleNameLabel: "module-name-from-label"}},
		Spec: v1beta1.ModuleTemplateSpec{
			Channel:    "regular",
			Target:     v1beta1.TargetControlPlane,
			Data:       &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operator.kyma-project.io/v1alpha1", "kind": "Keda"}},
			Descriptor: runtime.RawExtension{Raw: []byte(`{"component":{"name":"kyma-project.io/module/sample"}}`)},
		},
	}
}

func TestModuleTemplateTargetTravelsInAnAnnotation(t *testing.T) {
	hub := &v1beta2.ModuleTemplate{}
	require.NoError(t, docTemplate().ConvertTo(hub))
	assert.Equal(t, "regular", hub.Spec.Channel)
	assert.JSONEq(t, `{"component":{"name":"kyma-project.io/module/sample"}}`, string(hub.Spec.Descriptor.Raw))
	assert.JSONEq(t, `{"target":"control-plane"}`, hub.Annotations[v1beta1.V1beta1SpecAnnotation])

	back := &v1beta1.ModuleTemplate{}
	require.NoError(t, back.ConvertFrom(hub))
	assert.True(t, equality.Semantic.DeepEqual(docTemplate(), back), "lossless: %+v", back)
}

func TestModuleTemplateV1beta2OnlyFieldsTravelInAnAnnotation(t *testing.T) {
	hub := &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "keda-1.6.0"},
		Spec: v1beta2.ModuleTemplateSpec{
			Version: "1.6.0", ModuleName: "keda", Mandatory: true, RequiresDowntime: true,
			Descriptor: runtime.RawExtension{Raw: []byte(`{"component":{"name":"kyma-project.io/module/keda"}}`)},
			Info:       &v1beta2.ModuleInfo{Repository: "https://example.com/keda", Documentation: "https://example.com/docs"},
			Manager: &v1beta2.Manager{Name: "keda-manager", Namespace: "kyma-system",
				GroupVersionKind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}},
			AssociatedResources: []metav1.GroupVersionKind{{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}},
		},
	}
	mt := &v1beta1.ModuleTemplate{}
	require.NoError(t, mt.ConvertFrom(hub))
	assert.Empty(t, mt.Spec.Target)
	extra := mt.Annotations[v1beta1.V1beta2SpecAnnotation]
	for _, field := range []string{`"version":"1.6.0"`, `"moduleName":"keda"`, `"mandatory":true`, `"requiresDowntime":true`, `"info":`, `"manager":`, `"associatedResources":`} {
		assert.Contains(t, extra, field)
	}
	assert.NotContains(t, extra, "descriptor", "fields both versions have are not repeated")

	back := &v1beta2.ModuleTemplate{}
	require.NoError(t, mt.ConvertTo(back))
	assert.True(t, equality.Semantic.DeepEqual(hub, back), "lossless: %+v", back)
}

func TestManifestV1beta2OnlyFieldsTravelInAnAnnotation(t *testing.T) {
	hub := &v1beta2.Manifest{
		ObjectMeta: metav1.ObjectMeta{Name: "kyma-sample-keda", Labels: map[string]string{shared.KymaNameLabel: "kyma-sample"}},
		Spec: v1beta2.ManifestSpec{
			Remote: true, Version: "1.6.0", CustomResourcePolicy: v1beta2.CustomResourcePolicyIgnore,
			Install: v1beta2.InstallInfo{Name: "raw-manifest", Source: runtime.RawExtension{
				Raw: []byte(`{"repo":"registry.example.com/modules","ref":"sha256:ab","type":"oci-ref"}`)}},
			LocalizedImages: []string{"mirror.example.com/keda:2.1"},
		},
		Status: v1beta2.ManifestStatus{State: shared.StateProcessing},
	}
	m := &v1beta1.Manifest{}
	require.NoError(t, m.ConvertFrom(hub))
	assert.True(t, m.Spec.Remote)
	assert.Equal(t, shared.StateProcessing, m.Status.State)
	assert.JSONEq(t, `{"localizedImages":["mirror.example.com/keda:2.1"]}`, m.Annotations[v1beta1.V1beta2SpecAnnotation])

	back := &v1beta2.Manifest{}
	require.NoError(t, m.ConvertTo(back))
	assert.True(t, equality.Semantic.DeepEqual(hub, back), "lossless: %+v", back)
	assert.ErrorContains(t, m.ConvertTo(&v1beta2.Kyma{}), "want a v1beta2 Manifest")
	assert.ErrorContains(t, (&v1beta1.ModuleTemplate{}).ConvertFrom(&v1beta2.Kyma{}), "want a v1beta2 ModuleTemplate")
}
