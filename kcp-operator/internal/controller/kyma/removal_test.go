package kyma_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// The tests of "what a module may delete" (internal/removal and the
// Manifest controller's ownership check): user data survives upgrades,
// removals and purges.

// extraCRD is a second CRD a test module ships: kind Kind, plural plural.
func extraCRD(kind, plural string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.%[3]s}
spec:
  group: %[3]s
  scope: Namespaced
  names: {kind: %[1]s, plural: %[2]s, listKind: %[1]sList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, kind, plural, testGroup)
}

// userCR creates a custom resource as a user of the runtime would.
func userCR(t *testing.T, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion(testGroup + "/v1")
	cr.SetKind(kind)
	cr.SetNamespace(ns)
	cr.SetName(name)
	require.Eventually(t, func() bool {
		err := runtimeEnv.Client.Create(t.Context(), cr.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err)
	}, timeout, tick, "creating %s %s/%s", kind, ns, name)
	return cr
}

// present reports whether an object exists and is not being deleted.
func present(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
	return err == nil && obj.GetDeletionTimestamp().IsZero()
}

// goneOrGoing reports whether an object is deleted or being deleted (a bare
// API server has no namespace controller to finish a namespace's deletion).
func goneOrGoing(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
	return apierrors.IsNotFound(err) || (err == nil && !obj.GetDeletionTimestamp().IsZero())
}

func crd(name string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// (a) A version that no longer ships a CRD keeps it while users' CRs of it
// remain; the CRD stays the module's and goes with the module once they are gone.
func TestUpgradeThatDropsACRDKeepsUserCRs(t *testing.T) {
	publish(t, module{Name: "ledger", Version: "1.0.0", Extra: []string{extraCRD("Entry", "entries")}})
	publish(t, module{Name: "ledger", Version: "2.0.0"})
	releaseMeta(t, "ledger", map[string]string{"regular": "1.0.0"})
	newKyma(t, "dropcrd", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "ledger"}} })
	eventuallyManifest(t, "dropcrd-ledger", "version 1 installed", appliedAll(4))
	mine := userCR(t, "Entry", "dropcrd", "mine")

	mrm := &v1beta2.ModuleReleaseMeta{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "ledger"}, mrm))
	mrm.Spec.Channels = []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "2.0.0"}}
	require.NoError(t, kcp.Client.Update(t.Context(), mrm))

	require.Eventually(t, func() bool { return hasEvent(t, "dropcrd-ledger", "Kept") }, timeout, tick,
		"version 2 is applied and its prune keeps the CRD")
	assert.True(t, present(t, crd("entries."+testGroup)), "the CRD with a user's CR stays")
	assert.True(t, present(t, mine.DeepCopy()), "the user's CR stays")
	mf := eventuallyManifest(t, "dropcrd-ledger", "the kept CRD recorded", func(mf *v1beta2.Manifest) bool {
		return mf.Spec.Version == "2.0.0" && len(mf.Status.Synced) == 4
	})
	assert.Contains(t, mf.Status.Synced, shared.Resource{Name: "entries." + testGroup,
		GroupVersionKind: metav1.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}},
		"the module still holds the CRD")

	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), mine))
	updateKyma(t, "dropcrd", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	require.Eventually(t, func() bool { return goneOrGoing(t, crd("entries."+testGroup)) }, timeout, tick,
		"with its CRs gone, the CRD goes with the module")
}

// (b) Removal deletes the namespace the module created and keeps the ones
// it found or that are protected.
func TestRemovalKeepsNamespacesTheModuleDidNotCreate(t *testing.T) {
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "harbor-users", Labels: map[string]string{"team": "payments"},
	}}))
	nsDoc := func(name string) string { return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n" }
	publish(t, module{Name: "harbor", Version: "1.0.0", Extra: []string{
		nsDoc("default"), nsDoc("kyma-system"), nsDoc("harbor-users"), nsDoc("harbor-own"),
	}})
	releaseMeta(t, "harbor", map[string]string{"regular": "1.0.0"})
	newKyma(t, "nsowner", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "harbor"}} })
	mf := eventuallyManifest(t, "nsowner-harbor", "installed", appliedAll(7))
	require.True(t, present(t, namespace("harbor-own")))
	var created []string
	for _, c := range mf.Status.Created {
		created = append(created, c.Name)
	}
	assert.Contains(t, created, "harbor-own", "the namespace the module made is recorded")
	assert.NotContains(t, created, "harbor-users", "a namespace that was there is not the module's")

	updateKyma(t, "nsowner", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	require.Eventually(t, func() bool {
		_, err := getManifest(t, "nsowner-harbor")
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the module is removed")
	assert.True(t, goneOrGoing(t, namespace("harbor-own")), "the namespace the module created goes")
	for _, name := range []string{"default", "kyma-system", "harbor-users"} {
		assert.True(t, present(t, namespace(name)), "namespace %s stays", name)
	}
	require.Eventually(t, func() bool { return hasEvent(t, "nsowner-harbor", "Kept") }, timeout, tick)
}

// (c) A purge deletes the module but keeps a CRD whose users' CRs remain.
func TestPurgeKeepsCRDsWithUserCRs(t *testing.T) {
	publish(t, module{Name: "vault", Version: "1.0.0"})
	releaseMeta(t, "vault", map[string]string{"regular": "1.0.0"})
	newKyma(t, "purge-keeps", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "vault"}} })
	eventuallyManifest(t, "purge-keeps-vault", "installed", appliedAll(3))
	mine := userCR(t, "Vault", "purge-keeps", "mine")

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "purge-keeps")))
	eventuallyManifest(t, "purge-keeps-vault", "blocked by the user's CR", func(mf *v1beta2.Manifest) bool {
		c := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionInstallation)
		return c != nil && c.Reason == "DeletionBlocked"
	})
	require.Eventually(t, func() bool {
		err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "purge-keeps"}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, purgeGrace+timeout, tick, "the Kyma is purged")
	assert.True(t, goneOrGoing(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "purge-keeps", Name: "vault-config"}}),
		"the module's other objects are removed")
	assert.True(t, present(t, crd("vaults."+testGroup)), "the CRD with a user's CR stays")
	assert.True(t, present(t, mine.DeepCopy()), "the user's CR stays")
}

// (d) Objects of another owner are neither taken over nor deleted; the
// Manifest is Warning and names the owners.
func TestObjectsOfOtherOwnersAreNotTakenOver(t *testing.T) {
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), namespace("takeover")))
	byHelm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "takeover", Name: "beacon-config"},
		Data: map[string]string{"owner": "helm"}}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), byHelm, client.FieldOwner("helm")))
	byModule := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "takeover", Name: "shared-secret", Labels: map[string]string{
		shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "lighthouse",
	}}, StringData: map[string]string{"owner": "lighthouse"}}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), byModule))
	publish(t, module{Name: "beacon", Version: "1.0.0", Extra: []string{
		"apiVersion: v1\nkind: Secret\nmetadata: {name: shared-secret}\nstringData: {owner: beacon}\n",
	}})
	releaseMeta(t, "beacon", map[string]string{"regular": "1.0.0"})

	newKyma(t, "takeover", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "beacon"}} })
	mf := eventuallyManifest(t, "takeover-beacon", "Warning", manifestState(shared.StateWarning))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, "OwnedByOthers", cond.Reason)
	assert.Contains(t, cond.Message, "ConfigMap takeover/beacon-config is owned by field manager helm")
	assert.Contains(t, cond.Message, "Secret takeover/shared-secret is owned by module lighthouse")
	assert.Contains(t, mf.Status.LastOperation.Operation, "field manager helm")
	require.Eventually(t, func() bool { return hasEvent(t, "takeover-beacon", "OwnedByOthers") }, timeout, tick)
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(byHelm), byHelm))
	assert.Equal(t, map[string]string{"owner": "helm"}, byHelm.Data, "Helm's ConfigMap is left as it was")
	assert.NotContains(t, byHelm.Labels, shared.ModuleNameLabel)
	assert.Len(t, mf.Status.Synced, 2, "only the CRD and the Deployment are the module's")
	require.NoError(t, runtimeObject(t, "apps/v1", "Deployment", "takeover", "beacon-operator"), "the rest is applied")

	updateKyma(t, "takeover", func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	require.Eventually(t, func() bool {
		_, err := getManifest(t, "takeover-beacon")
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the module is removed")
	assert.True(t, present(t, byHelm), "Helm's ConfigMap survives the removal")
	assert.True(t, present(t, byModule), "the other module's Secret survives the removal")
	assert.Equal(t, "lighthouse", byModule.Labels[shared.ModuleNameLabel])
}
