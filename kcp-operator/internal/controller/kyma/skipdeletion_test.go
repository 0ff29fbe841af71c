package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// kymaGone reports whether the KCP Kyma name no longer exists.
func kymaGone(t *testing.T, name string) bool {
	t.Helper()
	err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, &v1beta2.Kyma{})
	return apierrors.IsNotFound(err)
}

// moduleConfigMap waits until the module's ConfigMap is in the runtime
// namespace of kyma and returns it.
func moduleConfigMap(t *testing.T, kyma, module string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: module + "-config", Namespace: kyma}}
	require.Eventually(t, func() bool {
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), cm) == nil
	}, timeout, tick, "module %s is installed for %s", module, kyma)
	return cm
}

func TestSkipReconciliationDoesNotBlockDeletion(t *testing.T) {
	kymaWithModule(t, "skip-deleted", module{Name: "uniform-skip", Version: "1.0.0"})
	cm := moduleConfigMap(t, "skip-deleted", "uniform-skip")
	updateKyma(t, "skip-deleted", func(k *v1beta2.Kyma) { k.Labels[shared.SkipReconciliationLabel] = shared.EnabledValue })

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "skip-deleted")))
	require.Eventually(t, func() bool { return kymaGone(t, "skip-deleted") }, timeout, tick, "the Kyma is deleted")
	assert.False(t, hasEvent(t, "skip-deleted", "Purged"), "by its deletion, not by the purge")
	_, err := getManifest(t, "skip-deleted-uniform-skip")
	assert.True(t, apierrors.IsNotFound(err), "its Manifest is gone")
	err = runtimeEnv.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	assert.True(t, apierrors.IsNotFound(err), "the module is removed from the runtime")
	_, err = runtimeKyma(t, "skip-deleted")
	assert.True(t, apierrors.IsNotFound(err), "the runtime Kyma is removed")
}

func TestSkipReconciliationDoesNotBlockPurge(t *testing.T) {
	kymaWithModule(t, "skip-purged", module{Name: "uniform-skip-purge", Version: "1.0.0"})
	moduleConfigMap(t, "skip-purged", "uniform-skip-purge")
	// The Manifest controller leaves this Manifest alone, so the deletion
	// cannot finish and only the purge ends it.
	updateManifest(t, "skip-purged-uniform-skip-purge", func(mf *v1beta2.Manifest) {
		mf.Labels[shared.SkipReconciliationLabel] = shared.EnabledValue
	})
	updateKyma(t, "skip-purged", func(k *v1beta2.Kyma) { k.Labels[shared.SkipReconciliationLabel] = shared.EnabledValue })

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "skip-purged")))
	require.Eventually(t, func() bool { return kymaGone(t, "skip-purged") }, purgeGrace+timeout, tick, "the Kyma is purged")
	assert.Eventually(t, func() bool { return hasEvent(t, "skip-purged", "Purged") }, timeout, tick, "by the purge")
	_, err := getManifest(t, "skip-purged-uniform-skip-purge")
	assert.True(t, apierrors.IsNotFound(err), "its stuck Manifest goes too")
}
