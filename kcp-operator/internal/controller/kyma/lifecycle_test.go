package kyma_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

func getManifest(t *testing.T, name string) (*v1beta2.Manifest, error) {
	t.Helper()
	mf := &v1beta2.Manifest{}
	err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, mf)
	return mf, err
}

func TestMandatoryModulesGoEverywhereUnlisted(t *testing.T) {
	publish(t, module{Name: "india", Version: "1.2.0"})
	releaseMeta(t, "india", nil, func(m *v1beta2.ModuleReleaseMeta) {
		m.Spec.Mandatory = &v1beta2.Mandatory{Version: "1.2.0"}
	})
	publish(t, module{Name: "juliett", Version: "0.1.0", Mandatory: true})
	t.Cleanup(func() {
		// Mandatory modules would go into every Kyma of the later tests.
		_ = kcp.Client.Delete(context.Background(), &v1beta2.ModuleReleaseMeta{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "india"}})
		_ = kcp.Client.Delete(context.Background(), &v1beta2.ModuleTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: "juliett-0.1.0"}})
	})

	newKyma(t, "mandatory")
	for _, name := range []string{"mandatory-india", "mandatory-juliett"} {
		require.Eventually(t, func() bool { _, err := getManifest(t, name); return err == nil }, timeout, tick, name)
		mf, err := getManifest(t, name)
		require.NoError(t, err)
		assert.Equal(t, shared.EnabledValue, mf.Labels[shared.MandatoryModuleLabel])
	}
	mf, err := getManifest(t, "mandatory-india")
	require.NoError(t, err)
	assert.Equal(t, "1.2.0", mf.Spec.Version)
	k := eventuallyKyma(t, "mandatory", "Ready", stateIs(shared.StateReady))
	assert.Empty(t, k.Status.Modules, "mandatory modules are not shown in the status")
	for _, module := range []string{"india", "juliett"} {
		require.Eventually(t, func() bool {
			mf, err := getManifest(t, "mandatory-"+module)
			return err == nil && mf.Status.State != "" && gaugeValue(t, "lifecycle_mgr_mandatory_module_state",
				map[string]string{"kyma_name": "mandatory", "module_name": module, "state": string(mf.Status.State)}) == 1
		}, timeout, tick, "the public operator's metric shows the state of mandatory module %s", module)
	}
}

func TestTemplateChangeReachesOnlyItsUsers(t *testing.T) {
	publish(t, module{Name: "kilo", Version: "1.0.0", Data: defaultCR("Kilo")})
	releaseMeta(t, "kilo", map[string]string{"regular": "1.0.0"})
	publish(t, module{Name: "lima", Version: "1.0.0"})
	releaseMeta(t, "lima", map[string]string{"regular": "1.0.0"})
	newKyma(t, "kilo-user", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "kilo"}} })
	newKyma(t, "lima-user", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "lima"}} })
	require.Eventually(t, func() bool { _, err := getManifest(t, "kilo-user-kilo"); return err == nil }, timeout, tick)
	eventuallyKyma(t, "lima-user", "lima resolved", func(k *v1beta2.Kyma) bool { return len(k.Status.Modules) == 1 })

	tmpl := &v1beta2.ModuleTemplate{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "kilo-1.0.0"}, tmpl))
	users, err := (&kymactrl.Users{Reader: operatorClient}).Of(t.Context(), tmpl, kymactrl.TemplateKeys)
	require.NoError(t, err)
	assert.Equal(t, []types.NamespacedName{{Namespace: kcpNamespace, Name: "kilo-user"}}, users)

	// The resync is an hour away: only the template event can bring this.
	tmpl.Spec.Data.Object["spec"] = map[string]any{"replicas": int64(3)}
	require.NoError(t, kcp.Client.Update(t.Context(), tmpl))
	require.Eventually(t, func() bool {
		mf, err := getManifest(t, "kilo-user-kilo")
		return err == nil && mf.Spec.Resource.Object["spec"].(map[string]any)["replicas"] == int64(3)
	}, timeout, tick, "the user's Manifest follows the template")
}

func TestUnmanagedModuleIsReleased(t *testing.T) {
	publish(t, module{Name: "mike", Version: "1.0.0"})
	releaseMeta(t, "mike", map[string]string{"regular": "1.0.0"})
	newKyma(t, "unmanaged", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "mike"}} })
	require.Eventually(t, func() bool { _, err := getManifest(t, "unmanaged-mike"); return err == nil }, timeout, tick)
	// A finalizer stands in for the Manifest controller, which (a later
	// part) leaves the resources of a released module alone.
	updateManifest(t, "unmanaged-mike", func(mf *v1beta2.Manifest) {
		mf.Finalizers = append(mf.Finalizers, "test.lifecycle-manager/hold")
	})
	no := false
	updateKyma(t, "unmanaged", func(k *v1beta2.Kyma) { k.Spec.Modules[0].Managed = &no })

	// An unmanaged module does not hold the Kyma back.
	eventuallyKyma(t, "unmanaged", "Ready with mike Unmanaged", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "mike")
		return ms != nil && ms.State == shared.StateUnmanaged && k.Status.State == shared.StateReady
	})
	require.Eventually(t, func() bool {
		mf, err := getManifest(t, "unmanaged-mike")
		return err == nil && !mf.DeletionTimestamp.IsZero()
	}, timeout, tick, "the Manifest is deleted")
	mf, err := getManifest(t, "unmanaged-mike")
	require.NoError(t, err)
	assert.Equal(t, "true", mf.Annotations[shared.UnmanagedAnnotation], "and marked so that its resources stay")
	updateManifest(t, "unmanaged-mike", func(mf *v1beta2.Manifest) { mf.Finalizers = nil })
}

func TestSkipReconciliation(t *testing.T) {
	publish(t, module{Name: "november", Version: "1.0.0"})
	releaseMeta(t, "november", map[string]string{"regular": "1.0.0"})
	newKyma(t, "skipped", func(k *v1beta2.Kyma) { k.Labels[shared.SkipReconciliationLabel] = "true" })
	newKyma(t, "not-skipped")
	eventuallyKyma(t, "not-skipped", "Ready", stateIs(shared.StateReady))

	k := getKyma(t, "skipped")
	assert.Empty(t, k.Finalizers, "a skipped Kyma is not touched at all")
	assert.Empty(t, k.Status.State)
	_, err := runtimeKyma(t, "skipped")
	assert.True(t, apierrors.IsNotFound(err), "nothing is created in its runtime: %v", err)

	updateKyma(t, "skipped", func(k *v1beta2.Kyma) {
		delete(k.Labels, shared.SkipReconciliationLabel)
		k.Spec.Modules = []v1beta2.Module{{Name: "november"}}
	})
	require.Eventually(t, func() bool { _, err := getManifest(t, "skipped-november"); return err == nil }, timeout, tick,
		"without the label the Kyma is reconciled")
}

func TestUnreachableRuntimeAndRotatedKubeconfig(t *testing.T) {
	newKymaWithKubeconfig(t, "unreachable", closedPortKubeconfig(t))
	k := eventuallyKyma(t, "unreachable", "Error", stateIs(shared.StateError))
	assert.Contains(t, k.Status.LastOperation.Operation, "runtime:")
	assert.Contains(t, k.Status.LastOperation.Operation, "connection refused")
	require.Eventually(t, func() bool { return hasEvent(t, "unreachable", "StateError") }, timeout, tick)

	newKyma(t, "unaffected")
	eventuallyKyma(t, "unaffected", "Ready while another runtime is down", stateIs(shared.StateReady))

	putKubeconfig(t, "unreachable", runtimeConfig)
	eventuallyKyma(t, "unreachable", "Ready after the kubeconfig rotation", stateIs(shared.StateReady))
}

func TestDeletionRemovesEverything(t *testing.T) {
	publish(t, module{Name: "oscar", Version: "1.0.0"})
	releaseMeta(t, "oscar", map[string]string{"regular": "1.0.0"})
	newKyma(t, "deleted", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "oscar"}} })
	require.Eventually(t, func() bool { _, err := getManifest(t, "deleted-oscar"); return err == nil }, timeout, tick)
	updateManifest(t, "deleted-oscar", func(mf *v1beta2.Manifest) {
		mf.Finalizers = append(mf.Finalizers, "test.lifecycle-manager/hold")
	})
	require.Eventually(t, func() bool {
		var list v1beta2.ModuleTemplateList
		return runtimeEnv.Client.List(t.Context(), &list, client.InNamespace("deleted")) == nil && len(list.Items) > 0
	}, timeout, tick, "the catalog reached the runtime")

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "deleted")))
	k := eventuallyKyma(t, "deleted", "Deleting", stateIs(shared.StateDeleting))
	assert.Contains(t, k.Status.LastOperation.Operation, "waiting for Manifests to be deleted:")
	assert.Contains(t, k.Status.LastOperation.Operation, "deleted-oscar")
	_, err := runtimeKyma(t, "deleted")
	require.NoError(t, err, "the runtime is cleaned up only after the modules are gone")

	updateManifest(t, "deleted-oscar", func(mf *v1beta2.Manifest) {
		mf.Finalizers = slices.DeleteFunc(mf.Finalizers, func(f string) bool { return f == "test.lifecycle-manager/hold" })
	})

	require.Eventually(t, func() bool {
		err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "deleted"}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the Kyma is gone")
	_, err = runtimeKyma(t, "deleted")
	assert.True(t, apierrors.IsNotFound(err), "the runtime Kyma is gone")
	// With no Kyma left in the runtime our CRDs go too, and their objects
	// with them, while the CRD terminates or at once.
	require.Eventually(t, func() bool {
		var left v1beta2.ModuleTemplateList
		err := runtimeEnv.Client.List(t.Context(), &left, client.InNamespace("deleted"))
		return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || (err == nil && len(left.Items) == 0)
	}, timeout, tick, "the catalog is gone")
}

func closedPortKubeconfig(t *testing.T) []byte {
	t.Helper()
	// Inline credentials (what runtime kubeconfigs may use) to a closed port.
	return runtimeKubeconfigAt(t, "https://127.0.0.1:1")
}
