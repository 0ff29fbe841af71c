package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

// The series under the public operator's names follow the Kyma as the
// public operator's do: one per state, 1 for the current one, with the
// runtime's shoot and instance ID, gone with the Kyma.
func TestPublicStateMetricsFollowTheKyma(t *testing.T) {
	newKyma(t, "public-names", func(k *v1beta2.Kyma) {
		k.Annotations[shared.SKRDomainAnnotation] = "c-3f9a.kyma.example.com"
		k.Labels[kymactrl.InstanceIDLabel] = "instance-public"
	})
	labels := func(state string) map[string]string {
		return map[string]string{"kyma_name": "public-names", "shoot": "c-3f9a", "instance_id": "instance-public", "state": state}
	}
	eventuallyKyma(t, "public-names", "Ready", stateIs(shared.StateReady))
	require.Eventually(t, func() bool {
		return gaugeValue(t, "lifecycle_mgr_kyma_state", labels("Ready")) == 1
	}, timeout, tick, "the Ready series is 1")
	for _, state := range []string{"Processing", "Error", "Deleting", "Warning"} {
		assert.Equal(t, 0.0, gaugeValue(t, "lifecycle_mgr_kyma_state", labels(state)), state)
	}

	updateKyma(t, "public-names", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "nosuchmodule"}} })
	eventuallyKyma(t, "public-names", "Error", stateIs(shared.StateError))
	require.Eventually(t, func() bool {
		return gaugeValue(t, "lifecycle_mgr_kyma_state", labels("Error")) == 1 &&
			gaugeValue(t, "lifecycle_mgr_kyma_state", labels("Ready")) == 0
	}, timeout, tick, "the 1 moves with the state")
	module := labels("Error")
	module["module_name"] = "nosuchmodule"
	assert.Equal(t, 1.0, gaugeValue(t, "lifecycle_mgr_module_state", module))

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "public-names")))
	require.Eventually(t, func() bool {
		err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "public-names"}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the Kyma is gone")
	require.Eventually(t, func() bool {
		return gaugeValue(t, "lifecycle_mgr_kyma_state", map[string]string{"kyma_name": "public-names"}) == -1 &&
			gaugeValue(t, "lifecycle_mgr_module_state", map[string]string{"kyma_name": "public-names"}) == -1
	}, timeout, tick, "its series go with it")
}
