package kyma_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// stuckManifest waits until a Kyma's module is installed and then makes its
// Manifest one whose deletion cannot finish: the skip-reconciliation label
// stops the Manifest controller, its finalizer stays. It returns the
// module's ConfigMap in the runtime.
func stuckManifest(t *testing.T, kyma, manifest string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "uniform-config", Namespace: kyma}}
	require.Eventually(t, func() bool {
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), cm) == nil
	}, timeout, tick, "the module is installed")
	require.Eventually(t, func() bool {
		mf, err := getManifest(t, manifest)
		if err != nil || len(mf.Status.Synced) == 0 {
			return false
		}
		mf.Labels[shared.SkipReconciliationLabel] = "true"
		return kcp.Client.Update(t.Context(), mf) == nil
	}, timeout, tick)
	return cm
}

func TestPurgeAfterTheGracePeriod(t *testing.T) {
	publish(t, module{Name: "uniform", Version: "1.0.0"})
	releaseMeta(t, "uniform", map[string]string{"regular": "1.0.0"})
	newKyma(t, "purge-bystander")
	newKyma(t, "purge-reachable", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "uniform"}} })
	newKyma(t, "purge-unreachable", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "uniform"}} })
	eventuallyKyma(t, "purge-bystander", "Ready", stateIs(shared.StateReady))
	cm := stuckManifest(t, "purge-reachable", "purge-reachable-uniform")
	stuckManifest(t, "purge-unreachable", "purge-unreachable-uniform")
	// The Kyma reconciles the Manifest's label change away unless it too
	// stays out of the way; its deletion is what is being purged.
	putKubeconfig(t, "purge-unreachable", closedPortKubeconfig(t))

	// The counter is the suite's: a Kyma another test left in deletion may
	// be purged meanwhile too, so only this test's two are asserted.
	purgedBefore := counterValue(t, "lifecycle_manager_kyma_purges_total", "purged")
	deleted := time.Now()
	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "purge-reachable")))
	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "purge-unreachable")))
	eventuallyKyma(t, "purge-reachable", "Deleting", stateIs(shared.StateDeleting))

	for _, name := range []string{"purge-reachable", "purge-unreachable"} {
		require.Eventually(t, func() bool {
			err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, &v1beta2.Kyma{})
			return apierrors.IsNotFound(err)
		}, purgeGrace+timeout, tick, "%s is purged", name)
		_, err := getManifest(t, name+"-uniform")
		assert.True(t, apierrors.IsNotFound(err), "the stuck Manifest of %s goes too", name)
		assert.Eventually(t, func() bool { return hasEvent(t, name, "Purged") }, timeout, tick, "an Event records the purge")
	}
	// deletionTimestamp has whole seconds, so the grace may end up to 1s early.
	assert.GreaterOrEqual(t, time.Since(deleted), purgeGrace-time.Second, "not before the grace period")

	err := runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	assert.True(t, apierrors.IsNotFound(err), "the module resource in the reachable runtime is removed")
	_, err = runtimeKyma(t, "purge-reachable")
	assert.True(t, apierrors.IsNotFound(err), "the runtime Kyma is removed")

	bystander := getKyma(t, "purge-bystander")
	assert.Contains(t, bystander.Finalizers, shared.KymaFinalizer, "a Kyma that is not being deleted is never purged")
	assert.Equal(t, shared.StateReady, bystander.Status.State)
	assert.GreaterOrEqual(t, counterValue(t, "lifecycle_manager_kyma_purges_total", "purged")-purgedBefore, float64(2),
		"both purges are counted")
}

func counterValue(t *testing.T, name, result string) float64 {
	t.Helper()
	families, err := metricsRegistry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
