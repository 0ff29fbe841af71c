package kyma_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// slowRemoval is a finalizer that keeps a deleted object until the test
// removes it, as a module's removal takes its time.
const slowRemoval = "test.lifecycle-manager.io/slow-removal"

// TestObjectsOfAHeldCRDWaitForIt: a module that ships a CRD another module
// still holds (that module being removed, say) creates no objects of it,
// neither its default CR nor CRs of its manifests: they would be instances
// of the other module's CRD, whose removal then waits for them as its
// users' data while this module waits for the CRD. While the other owner
// deletes the CRD, the module waits for it (Processing, no Warning); once
// the CRD is gone, the module installs it and its objects.
func TestObjectsOfAHeldCRDWaitForIt(t *testing.T) {
	m := module{Name: "relay", Version: "1.0.0", Data: defaultCR("Relay"), Extra: []string{
		"apiVersion: " + testmodule.Group + "/v1\nkind: Relay\nmetadata: {name: extra}\nspec: {replicas: 2}\n",
	}}
	held := heldCRDOf(t, m, "baton")
	publish(t, m)
	releaseMeta(t, m.Name, map[string]string{"regular": m.Version})
	newKyma(t, "held-crd", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: m.Name}} })

	mf := eventuallyManifest(t, "held-crd-relay", "Warning", manifestState(shared.StateWarning))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Contains(t, cond.Message, "CustomResourceDefinition relays."+testmodule.Group+" is owned by module baton")
	assert.Contains(t, cond.Message, "Relay held-crd/extra waits for its CRD")
	for _, name := range []string{"default", "extra"} {
		err := runtimeObject(t, testmodule.Group+"/v1", "Relay", "held-crd", name)
		assert.True(t, apierrors.IsNotFound(err), "Relay %s is not created while baton holds the CRD: %v", name, err)
	}

	patch := client.MergeFrom(held.DeepCopy())
	controllerutil.AddFinalizer(held, slowRemoval)
	require.NoError(t, runtimeEnv.Client.Patch(t.Context(), held, patch))
	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), held), "baton's removal deletes its CRD, slowly")
	mf = eventuallyManifest(t, "held-crd-relay", "Processing", manifestState(shared.StateProcessing))
	assert.Contains(t, mf.Status.LastOperation.Operation, "waiting for objects their owners are deleting: ")
	assert.Contains(t, mf.Status.LastOperation.Operation, "CustomResourceDefinition relays."+testmodule.Group+" is being deleted by its owner, module baton")
	err := runtimeObject(t, testmodule.Group+"/v1", "Relay", "held-crd", "default")
	assert.True(t, apierrors.IsNotFound(err), "still no Relay: %v", err)

	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(held), held))
	patch = client.MergeFrom(held.DeepCopy())
	controllerutil.RemoveFinalizer(held, slowRemoval)
	require.NoError(t, runtimeEnv.Client.Patch(t.Context(), held, patch), "baton's removal ends")
	eventuallyManifest(t, "held-crd-relay", "applied in full", func(mf *v1beta2.Manifest) bool {
		return meta.IsStatusConditionTrue(mf.Status.Conditions, v1beta2.ConditionResources)
	})
	require.Eventually(t, func() bool {
		return runtimeObject(t, testmodule.Group+"/v1", "Relay", "held-crd", "default") == nil &&
			runtimeObject(t, testmodule.Group+"/v1", "Relay", "held-crd", "extra") == nil
	}, timeout, tick, "the module's Relays are created once the CRD is its own")
}

// heldCRDOf creates in the runtime the CRD module m ships, held by module
// owner.
func heldCRDOf(t *testing.T, m module, owner string) *unstructured.Unstructured {
	t.Helper()
	first, _, _ := strings.Cut(m.Manifests(), "---\n")
	crd := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(first), &crd.Object))
	crd.SetLabels(map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: owner})
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), crd, client.FieldOwner("baton")))
	return crd
}
