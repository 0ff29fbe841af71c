package v1beta1_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
)

// docKyma is the original documentation's Kyma with a custom sync namespace.
func docKyma() *v1beta1.Kyma {
	return &v1beta1.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: "my-kyma", Namespace: "kyma-system"},
		Spec: v1beta1.KymaSpec{
			Channel: "alpha",
			Modules: []v1beta1.Module{{Name: "keda", Channel: "regular"}, {Name: "serverless"}},
			Sync: &v1beta1.Sync{Enabled: true, Strategy: v1beta1.SyncStrategySecret, Namespace: "custom-sync-namespace",
				ModuleCatalog: ptr.To(true), NoModuleCopy: ptr.To(true)},
		},
	}
}

func up(t *testing.T, k *v1beta1.Kyma) *v1beta2.Kyma {
	t.Helper()
	hub := &v1beta2.Kyma{}
	require.NoError(t, k.ConvertTo(hub))
	return hub
}

func down(t *testing.T, hub *v1beta2.Kyma) *v1beta1.Kyma {
	t.Helper()
	k := &v1beta1.Kyma{}
	require.NoError(t, k.ConvertFrom(hub))
	return k
}

func TestKymaSyncTravelsInAnAnnotation(t *testing.T) {
	hub := up(t, docKyma())
	assert.Equal(t, "alpha", hub.Spec.Channel)
	assert.Equal(t, []v1beta2.Module{{Name: "keda", Channel: "regular"}, {Name: "serverless"}}, hub.Spec.Modules)
	assert.Equal(t, "custom-sync-namespace", hub.Annotations[shared.SyncNamespaceAnnotation],
		"sync.namespace is where v1beta2 reads the runtime-side namespace from")
	assert.JSONEq(t, `{"sync":{"enabled":true,"strategy":"secret","namespace":"custom-sync-namespace","moduleCatalog":true,"noModuleCopy":true}}`,
		hub.Annotations[v1beta1.V1beta1SpecAnnotation])

	back := down(t, hub)
	assert.True(t, equality.Semantic.DeepEqual(docKyma(), back), "v1beta1 → v1beta2 → v1beta1 is lossless: %+v", back)
	assert.Empty(t, back.Annotations, "both annotations are consumed on the way back")
}

func TestKymaV1beta2OnlyFieldsTravelInAnAnnotation(t *testing.T) {
	hub := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: "k", Namespace: "kcp-system", Annotations: map[string]string{"team": "a"}},
		Spec: v1beta2.KymaSpec{
			Channel: "regular", SkipMaintenanceWindows: true,
			Modules: []v1beta2.Module{
				{Name: "keda", Managed: ptr.To(false)},
				{Name: "serverless", Managed: ptr.To(true), RemoteModuleTemplateRef: "kyma-system/serverless"},
				{Name: "istio", Managed: ptr.To(true)},
			},
		},
		Status: v1beta2.KymaStatus{State: shared.StateReady, ActiveChannel: "regular"},
	}
	k := down(t, hub)
	assert.Nil(t, k.Spec.Sync)
	assert.Equal(t, shared.StateReady, k.Status.State, "the status is the same in both versions")
	assert.JSONEq(t, `{"skipMaintenanceWindows":true,"modules":[{"name":"keda","managed":false},{"name":"serverless","remoteModuleTemplateRef":"kyma-system/serverless"}]}`,
		k.Annotations[v1beta1.V1beta2SpecAnnotation], "managed: true is the default and not carried")
	assert.Equal(t, "a", k.Annotations["team"])

	back := up(t, k)
	want := hub.DeepCopy()
	want.Spec.Modules[1].Managed, want.Spec.Modules[2].Managed = nil, nil // defaulted to true again by the API server
	assert.True(t, equality.Semantic.DeepEqual(want, back), "v1beta2 → v1beta1 → v1beta2 is lossless: %+v", back)
}

func TestKymaConversionEdges(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the sync-namespace annotation changed by a v1beta2 client is what v1beta1 shows", func(t *testing.T) {
			hub := up(t, docKyma())
			hub.Annotations[shared.SyncNamespaceAnnotation] = "moved"
			assert.Equal(t, "moved", down(t, hub).Spec.Sync.Namespace)
		}},
		{"a sync-namespace annotation without sync.namespace stays an annotation", func(t *testing.T) {
			k := docKyma()
			k.Spec.Sync.Namespace = ""
			k.Annotations = map[string]string{shared.SyncNamespaceAnnotation: "by-annotation"}
			back := down(t, up(t, k))
			assert.True(t, equality.Semantic.DeepEqual(k, back), "%+v", back)
		}},
		{"a module no longer listed in v1beta1 takes its v1beta2 fields along", func(t *testing.T) {
			k := down(t, &v1beta2.Kyma{Spec: v1beta2.KymaSpec{Modules: []v1beta2.Module{
				{Name: "keda", Managed: ptr.To(false)}, {Name: "istio"},
			}}})
			k.Spec.Modules = k.Spec.Modules[1:]
			hub := up(t, k)
			assert.Equal(t, []v1beta2.Module{{Name: "istio"}}, hub.Spec.Modules)
			assert.NotContains(t, hub.Annotations, v1beta1.V1beta2SpecAnnotation)
		}},
		{"the v1beta1 spec wins over fields the annotation should not have", func(t *testing.T) {
			k := &v1beta1.Kyma{Spec: v1beta1.KymaSpec{Channel: "fast"}}
			k.Annotations = map[string]string{v1beta1.V1beta2SpecAnnotation: `{"channel":"regular","skipMaintenanceWindows":true}`}
			hub := up(t, k)
			assert.Equal(t, "fast", hub.Spec.Channel)
			assert.True(t, hub.Spec.SkipMaintenanceWindows)
		}},
		{"an annotation that does not decode stays as it is, both ways", func(t *testing.T) {
			for _, garbage := range []string{`not json`, `{"unknownField":1}`, `{"skipMaintenanceWindows":"yes"}`, `{"modules":[{"managed":false}]}`} {
				k := &v1beta1.Kyma{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1beta1.V1beta2SpecAnnotation: garbage}}}
				hub := up(t, k)
				assert.Equal(t, garbage, hub.Annotations[v1beta1.V1beta2SpecAnnotation])
				assert.False(t, hub.Spec.SkipMaintenanceWindows)

				hub = &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1beta1.V1beta1SpecAnnotation: garbage}}}
				k = down(t, hub)
				assert.Equal(t, garbage, k.Annotations[v1beta1.V1beta1SpecAnnotation])
				assert.Nil(t, k.Spec.Sync)
				assert.True(t, equality.Semantic.DeepEqual(hub, up(t, k)), "lossless with %q", garbage)
			}
		}},
		{"a sync without namespace leaves the sync-namespace annotation alone", func(t *testing.T) {
			k := &v1beta1.Kyma{Spec: v1beta1.KymaSpec{Sync: &v1beta1.Sync{Enabled: true}}}
			assert.NotContains(t, up(t, k).Annotations, shared.SyncNamespaceAnnotation)
		}},
		{"other hub types are refused", func(t *testing.T) {
			assert.ErrorContains(t, (&v1beta1.Kyma{}).ConvertTo(&v1beta2.Manifest{}), "want a v1beta2 Kyma")
			assert.ErrorContains(t, (&v1beta1.Kyma{}).ConvertFrom(&v1beta2.Manifest{}), "want a v1beta2 Kyma")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}
