package kyma_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
)

// gadgetGroup is the group of a kind no test module defines: the CRD of an
// associated kind comes from elsewhere (another module, the platform), so
// that only spec.associatedResources can make a deletion wait for it.
const gadgetGroup = "assoc.example.com"

func gadgetCRD(t *testing.T) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + gadgetGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gadgetGroup, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), crd))
	require.Eventually(t, func() bool {
		return runtimeEnv.Client.List(t.Context(), gadgetList()) == nil
	}, timeout, tick, "the Gadget CRD is served")
}

func ptrTo[T any](v T) *T { return &v }

func gadgetList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(gadgetGroup + "/v1")
	l.SetKind("GadgetList")
	return l
}

func gadget(ns, name string) *unstructured.Unstructured {
	g := &unstructured.Unstructured{}
	g.SetAPIVersion(gadgetGroup + "/v1")
	g.SetKind("Gadget")
	g.SetNamespace(ns)
	g.SetName(name)
	return g
}

// heldGadget is a Gadget the module ships, with a finalizer its operator
// would remove.
const heldGadget = "apiVersion: " + gadgetGroup + "/v1\nkind: Gadget\n" +
	"metadata: {name: quince-gadget, finalizers: [test.lifecycle-manager.io/hold]}\n"

func TestDeletionWaitsForAssociatedResources(t *testing.T) {
	gadgetCRD(t)
	publishWith(t, module{Name: "quince", Version: "1.0.0", Extra: []string{heldGadget}}, func(s *v1beta2.ModuleTemplateSpec) {
		s.AssociatedResources = []metav1.GroupVersionKind{
			{Group: gadgetGroup, Version: "v1", Kind: "Gadget"},
			{Group: "ghost.example.com", Version: "v1", Kind: "Ghost"}, // not served by the runtime: nothing to wait for
		}
	})
	newKyma(t, "assoc-set", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "quince"}} })
	kymaWithModule(t, "assoc-unset", module{Name: "rhubarb", Version: "1.0.0"})
	eventuallyManifest(t, "assoc-set-quince", "installed", appliedAll(4))
	eventuallyManifest(t, "assoc-unset-rhubarb", "installed", appliedAll(3))
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), gadget("assoc-unset", "theirs")))
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), gadget("assoc-set", "mine")))

	// A module without associated kinds goes whatever Gadgets users hold.
	updateKyma(t, "assoc-unset", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	require.Eventually(t, func() bool {
		_, err := getManifest(t, "assoc-unset-rhubarb")
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the module without associated kinds is removed")
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(gadget("assoc-unset", "theirs")), gadget("", "")),
		"a user's object is never deleted")
	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), gadget("assoc-unset", "theirs")))

	updateKyma(t, "assoc-set", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	mf := eventuallyManifest(t, "assoc-set-quince", "blocked by the user's Gadget", manifestState(shared.StateWarning))
	assert.Contains(t, mf.Status.LastOperation.Operation,
		"deletion waits for objects of the module's associated kinds, which the lifecycle manager does not delete: Gadget assoc-set/mine")
	assert.Equal(t, "DeletionBlocked", meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionInstallation).Reason)
	own := gadget("assoc-set", "quince-gadget")
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(own), own))
	assert.False(t, own.GetDeletionTimestamp().IsZero(), "the module's own Gadget is deleted, under the removal rules")
	require.NoError(t, runtimeObject(t, "apps/v1", "Deployment", "assoc-set", "quince-operator"), "the module stays while it waits")
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(gadget("assoc-set", "mine")), gadget("", "")),
		"the user's Gadget is not deleted")

	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), gadget("assoc-set", "mine")))
	mf = eventuallyManifest(t, "assoc-set-quince", "waiting for the module's own Gadget", manifestState(shared.StateDeleting))
	assert.Contains(t, mf.Status.LastOperation.Operation,
		"waiting for objects of the module's associated kinds to be deleted: Gadget assoc-set/quince-gadget")
	require.NoError(t, runtimeObject(t, "apps/v1", "Deployment", "assoc-set", "quince-operator"), "the operator stays to finish its objects")

	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))
	require.NoError(t, runtimeEnv.Client.Patch(t.Context(), own, patch))
	require.Eventually(t, func() bool {
		_, mfErr := getManifest(t, "assoc-set-quince")
		depErr := runtimeObject(t, "apps/v1", "Deployment", "assoc-set", "quince-operator")
		return apierrors.IsNotFound(mfErr) && apierrors.IsNotFound(depErr)
	}, timeout, tick, "once no Gadget is left, the module is removed")
}

// TestRemoteFalseIsRefused covers a Manifest with spec.remote: false stored
// before the CRD refused it: the controller refuses it too, applying nothing.
func TestRemoteFalseIsRefused(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Name: "manifests.operator.kyma-project.io"}, crd))
	withRule := crd.DeepCopy()
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1beta2" })
	require.GreaterOrEqual(t, i, 0)
	spec := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"]
	remote := spec.Properties["remote"]
	require.NotEmpty(t, remote.XValidations, "the CRD refuses remote: false")
	remote.XValidations = nil
	spec.Properties["remote"] = remote
	require.NoError(t, kcp.Client.Update(t.Context(), crd))
	restore := func() {
		require.Eventually(t, func() bool {
			current := &apiextensionsv1.CustomResourceDefinition{}
			if kcp.Client.Get(t.Context(), client.ObjectKeyFromObject(withRule), current) != nil {
				return false
			}
			current.Spec = withRule.Spec
			return kcp.Client.Update(t.Context(), current) == nil
		}, timeout, tick, "restoring the Manifest CRD")
	}
	defer restore()

	source, err := json.Marshal(v1beta2.ImageSpec{Repo: reg.Host + "/modules", Name: "kyma-project.io/module/nowhere", Ref: "1.0.0"})
	require.NoError(t, err)
	mf := &v1beta2.Manifest{
		ObjectMeta: metav1.ObjectMeta{Name: "remote-false", Namespace: kcpNamespace, Labels: map[string]string{
			shared.KymaNameLabel: "remote-false", shared.ModuleNameLabel: "nowhere"}},
		Spec: v1beta2.ManifestSpec{Remote: false, Install: v1beta2.InstallInfo{Name: "raw-manifest", Source: runtime.RawExtension{Raw: source}}},
	}
	require.Eventually(t, func() bool { return kcp.Client.Create(t.Context(), mf) == nil }, timeout, tick,
		"the API server serves the CRD without the rule")
	restore()
	defer func() { assert.NoError(t, client.IgnoreNotFound(kcp.Client.Delete(t.Context(), mf))) }()

	got := eventuallyManifest(t, "remote-false", "refused", manifestState(shared.StateError))
	assert.Contains(t, got.Status.LastOperation.Operation, "spec.remote: false (install into the control plane) is not supported")
	assert.Equal(t, manifest.ReasonControlPlaneTarget, meta.FindStatusCondition(got.Status.Conditions, v1beta2.ConditionInstallation).Reason)
	assert.Empty(t, got.Status.Synced, "nothing is applied")
}
