package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// TestReleasedModuleLosesTheOperatorsLabels checks that managed: false
// leaves the module's objects in the runtime without the labels by which
// the drift watch selects them, and with everything else they carry.
func TestReleasedModuleLosesTheOperatorsLabels(t *testing.T) {
	kymaWithModule(t, "released", module{Name: "relic", Version: "1.0.0", Data: defaultCR("Relic")})
	eventuallyManifest(t, "released-relic", "installed", appliedAll(3))
	require.Eventually(t, func() bool {
		return runtimeObject(t, testGroup+"/v1", "Relic", "released", "default") == nil
	}, timeout, tick, "the default CR is created")

	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: "released", Name: "relic-operator"}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), key, dep))
	require.Equal(t, shared.OperatorName, dep.Labels[shared.ManagedByLabel])
	patch := client.MergeFrom(dep.DeepCopy())
	dep.Labels["team"] = "payments"
	require.NoError(t, runtimeEnv.Client.Patch(t.Context(), dep, patch), "a label of the user's, which the release keeps")

	no := false
	updateKyma(t, "released", func(k *v1beta2.Kyma) { k.Spec.Modules[0].Managed = &no })
	require.Eventually(t, func() bool {
		_, err := getManifest(t, "released-relic")
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the Manifest goes")

	require.NoError(t, runtimeEnv.Client.Get(t.Context(), key, dep), "the Deployment stays")
	assert.True(t, dep.DeletionTimestamp.IsZero())
	assert.NotContains(t, dep.Labels, shared.ManagedByLabel)
	assert.NotContains(t, dep.Labels, shared.ModuleNameLabel)
	assert.Equal(t, "payments", dep.Labels["team"])
	assert.NotEmpty(t, dep.Spec.Template.Spec.Containers, "only the labels changed")

	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion(testGroup + "/v1")
	cr.SetKind(testmodule.Kind("relic"))
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "released", Name: "default"}, cr),
		"the default CR stays")
	assert.NotContains(t, cr.GetLabels(), shared.ManagedByLabel)
	eventuallyKyma(t, "released", "Ready with relic Unmanaged", func(k *v1beta2.Kyma) bool {
		ms := moduleStatus(k, "relic")
		return ms != nil && ms.State == shared.StateUnmanaged && k.Status.State == shared.StateReady
	})
}
