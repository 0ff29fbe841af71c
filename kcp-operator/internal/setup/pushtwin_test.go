package setup_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	skrwebhookctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/skrwebhook"
)

// TestASecondKymaWithTheSameRuntimeIDGetsNoPushIdentity creates a Kyma
// whose runtime ID is the suite Kyma's: a certificate names only the ID,
// so the newer Kyma gets none and says why, and the runtime's events
// reconcile the older Kyma only.
func TestASecondKymaWithTheSameRuntimeIDGetsNoPushIdentity(t *testing.T) {
	waitForAgent(t)
	kubeconfig := &corev1.Secret{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "kubeconfig-" + kymaName}, kubeconfig))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-twin", Namespace: ns, Labels: map[string]string{shared.KymaNameLabel: "twin"}},
		Data:       kubeconfig.Data,
	}
	twin := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: "twin", Namespace: ns,
			Labels:      map[string]string{shared.RuntimeIDLabel: runtimeID},
			Annotations: map[string]string{shared.SyncNamespaceAnnotation: "twin"}},
		Spec: v1beta2.KymaSpec{Channel: "regular"},
	}
	require.NoError(t, kcp.Client.Create(t.Context(), secret))
	require.NoError(t, kcp.Client.Create(t.Context(), twin))
	t.Cleanup(func() {
		_ = kcp.Client.Delete(context.Background(), twin)
		_ = kcp.Client.Delete(context.Background(), secret)
	})

	require.Eventually(t, func() bool {
		k := &v1beta2.Kyma{}
		if kcp.Client.Get(t.Context(), client.ObjectKeyFromObject(twin), k) != nil {
			return false
		}
		c := meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionSKRWebhook)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == skrwebhookctrl.ReasonRuntimeIDConflict &&
			assert.Contains(t, c.Message, ns+"/"+kymaName)
	}, timeout, tick, "the newer Kyma says whose identity the runtime ID is")
	err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: config.ClientSecretName("twin")}, &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "no agent certificate for the newer Kyma: %v", err)

	// Before rotation_test.go's tests (file order), while the CA is stable.
	sent := time.Now()
	resp, err := postAs(t, kcpCA(t), runtimeID)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool {
		hop, ok := op.Pushed.Last(types.NamespacedName{Namespace: ns, Name: kymaName})
		return ok && !hop.Latest.Before(sent)
	}, timeout, tick, "the event reconciles the Kyma that owns the runtime ID")
	_, twinPushed := op.Pushed.Last(client.ObjectKeyFromObject(twin))
	assert.False(t, twinPushed, "and never the newer one")
}
