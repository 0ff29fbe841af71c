package kyma_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// The runtime Kyma as the runtime's users and module operators see it.

const holdFinalizer = "test.lifecycle-manager/hold"

// moduleCR is the default CR of kind in the runtime namespace ns.
func moduleCR(ns, kind string) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion(testGroup + "/v1")
	cr.SetKind(kind)
	cr.SetNamespace(ns)
	cr.SetName("default")
	return cr
}

// updateRuntimeObject changes an object in the runtime, retrying until it
// exists and on conflicts.
func updateRuntimeObject(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	require.Eventually(t, func() bool {
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj) != nil {
			return false
		}
		mutate()
		return runtimeEnv.Client.Update(t.Context(), obj) == nil
	}, timeout, tick, "updating %s in the runtime", obj.GetName())
}

// A deprovisioning shows in the runtime Kyma before any module goes, so
// that module operators can tell it from the removal of their module; the
// runtime Kyma itself goes last.
func TestRuntimeKymaIsDeletingBeforeItsModulesGo(t *testing.T) {
	kymaWithModule(t, "deprovision", module{Name: "farewell", Version: "1.0.0", Data: defaultCR("Farewell")})
	playModuleOperator(t, "deprovision", "farewell", "Ready", true)
	eventuallyKyma(t, "deprovision", "Ready", stateIs(shared.StateReady))
	// The module's operator holds its CR: the module's removal waits.
	cr := moduleCR("deprovision", "Farewell")
	updateRuntimeObject(t, cr, func() { cr.SetFinalizers(append(cr.GetFinalizers(), holdFinalizer)) })

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "deprovision")))
	require.Eventually(t, func() bool {
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(cr), cr) == nil && !cr.GetDeletionTimestamp().IsZero()
	}, timeout, tick, "the module's removal deletes its CR")
	rk, err := runtimeKyma(t, "deprovision")
	require.NoError(t, err, "the runtime Kyma stays while a module is still there")
	assert.Equal(t, shared.StateDeleting, rk.Status.State, "the runtime Kyma was Deleting before the module's CR was deleted")
	assert.NotEmpty(t, rk.Status.LastOperation.Operation)
	_, err = getManifest(t, "deprovision-farewell")
	require.NoError(t, err, "the module is still there")

	updateRuntimeObject(t, cr, func() {
		cr.SetFinalizers(slices.DeleteFunc(cr.GetFinalizers(), func(f string) bool { return f == holdFinalizer }))
	})
	require.Eventually(t, func() bool {
		err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "deprovision"}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the Kyma is gone")
	_, err = runtimeKyma(t, "deprovision")
	assert.True(t, apierrors.IsNotFound(err), "the runtime Kyma is gone at the end: %v", err)
}

// The runtime Kyma's status says what a runtime user needs and names no
// KCP object: no Manifests, no KCP namespace.
func TestRuntimeStatusNamesNoKCPObjects(t *testing.T) {
	kymaWithModule(t, "plain-status", module{Name: "mirrored", Version: "1.0.0", Data: defaultCR("Mirrored")})
	playModuleOperator(t, "plain-status", "mirrored", "Ready", true)
	k := eventuallyKyma(t, "plain-status", "Ready", stateIs(shared.StateReady))
	kcpSide := moduleStatus(k, "mirrored")
	require.NotNil(t, kcpSide)
	require.NotNil(t, kcpSide.Manifest, "the KCP status names the Manifest")
	require.Equal(t, kcpNamespace, kcpSide.Template.Namespace)

	var rk *v1beta2.Kyma
	require.Eventually(t, func() bool {
		var err error
		rk, err = runtimeKyma(t, "plain-status")
		return err == nil && rk.Status.State == shared.StateReady
	}, timeout, tick, "the status reaches the runtime Kyma")
	raw, err := json.Marshal(rk.Status)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), kcpNamespace)
	ms := moduleStatus(rk, "mirrored")
	require.NotNil(t, ms, string(raw))
	assert.Equal(t, shared.StateReady, ms.State)
	assert.Equal(t, "1.0.0", ms.Version)
	assert.Equal(t, "regular", ms.Channel)
	assert.Equal(t, kcpSide.FQDN, ms.FQDN)
	assert.Nil(t, ms.Manifest)
	require.NotNil(t, ms.Template)
	assert.Equal(t, v1beta2.TrackingObject{TypeMeta: kcpSide.Template.TypeMeta,
		PartialMeta: v1beta2.PartialMeta{Name: kcpSide.Template.Name, Namespace: "plain-status", Generation: kcpSide.Template.Generation}},
		*ms.Template, "the template is the runtime catalog's copy")
	assert.Equal(t, kcpSide.Resource, ms.Resource, "the default CR is the runtime's")
}
