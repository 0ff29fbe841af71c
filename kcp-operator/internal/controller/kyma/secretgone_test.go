package kyma_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

func TestDeletionWithoutAccessSecretFinishesAtOnce(t *testing.T) {
	kymaWithModule(t, "secret-gone", module{Name: "victor-secret", Version: "1.0.0"})
	moduleConfigMap(t, "secret-gone", "victor-secret")

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-secret-gone", Namespace: kcpNamespace}}
	require.NoError(t, kcp.Client.Delete(t.Context(), secret))
	// Wait until the operator has seen the Secret go, so that the deletion
	// below cannot take the normal path through a still cached Secret.
	nudge(t, "secret-gone")
	eventuallyKyma(t, "secret-gone", "Error without the Secret", func(k *v1beta2.Kyma) bool {
		return k.Status.State == shared.StateError && strings.Contains(k.Status.LastOperation.Operation, "no runtime kubeconfig")
	})

	deleted := time.Now()
	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "secret-gone")))
	require.Eventually(t, func() bool { return kymaGone(t, "secret-gone") }, timeout, tick, "the Kyma is deleted")
	assert.Less(t, time.Since(deleted), purgeGrace-time.Second, "well before the purge")
	_, err := getManifest(t, "secret-gone-victor-secret")
	assert.True(t, apierrors.IsNotFound(err), "its Manifest is gone")
	assert.Eventually(t, func() bool { return hasEvent(t, "secret-gone", kymactrl.ReasonRuntimeNotCleaned) }, timeout, tick,
		"an Event says the runtime was not cleaned")
	assert.False(t, hasEvent(t, "secret-gone", "Purged"), "not by the purge")
}
