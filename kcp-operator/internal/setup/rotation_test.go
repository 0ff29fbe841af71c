package setup_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
)

func runtimeSecret(t *testing.T) (*corev1.Secret, error) {
	t.Helper()
	s := &corev1.Secret{}
	return s, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "skr-agent-tls"}, s)
}

// TestAgentSecretIsRestoredByPush deletes the agent's certificate Secret in
// the runtime: the drift watch reports it and the operator writes it again.
func TestAgentSecretIsRestoredByPush(t *testing.T) {
	waitForAgent(t)
	secret, err := runtimeSecret(t)
	require.NoError(t, err)
	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), secret))
	require.Eventually(t, func() bool {
		s, err := runtimeSecret(t)
		return err == nil && s.UID != secret.UID
	}, timeout, tick, "the Secret is back, with the resync hours away")
}

// TestCARotationOnRequest asks for a CA rotation through the bundle
// Secret's annotation while the runtime keeps changing: the agent's
// certificate is re-issued by the new CA, and every change still arrives.
func TestCARotationOnRequest(t *testing.T) {
	waitForAgent(t)
	before, err := runtimeSecret(t)
	require.NoError(t, err)
	bundle := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: op.PKI.Options.BundleSecret}
	require.NoError(t, kcp.Client.Get(t.Context(), key, bundle))
	if bundle.Annotations == nil {
		bundle.Annotations = map[string]string{}
	}
	bundle.Annotations[shared.RotateCAAnnotation] = time.Now().Format(time.RFC3339Nano)
	require.NoError(t, kcp.Client.Update(t.Context(), bundle))

	// A stream of runtime writes across the rotation; each must reach the KCP.
	deadline := time.Now().Add(45 * time.Second)
	i := 0
	for time.Now().Before(deadline) {
		i++
		value := time.Now().Format("150405.000")
		require.Eventually(t, func() bool {
			rk := &v1beta2.Kyma{}
			if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "default"}, rk) != nil {
				return false
			}
			rk.Spec.Channel = channelFor(i)
			return runtimeEnv.Client.Update(t.Context(), rk) == nil
		}, timeout, tick)
		require.Eventually(t, func() bool { return getKyma(t).Spec.Channel == channelFor(i) }, timeout, 20*time.Millisecond,
			"write %d (%s) reached the KCP during the rotation", i, value)
		after, err := runtimeSecret(t)
		if err == nil && !bytes.Equal(after.Data["tls.crt"], before.Data["tls.crt"]) && rotatedIssuer(t, before, after) {
			break
		}
	}
	after, err := runtimeSecret(t)
	require.NoError(t, err)
	assert.True(t, rotatedIssuer(t, before, after), "the agent's certificate is re-issued by the new CA")
	assert.Equal(t, http.StatusOK, postEvent(t, clientWith(t, after.Data["tls.crt"], after.Data["tls.key"])),
		"the listener trusts the new CA before an agent holds a certificate of it")
	certs, err := pki.ParseCerts(after.Data["ca.crt"])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(certs), 2, "the bundle holds the old and the new CA during the rotation")
	t.Logf("%d runtime writes crossed the rotation, all reached the KCP", i)
	updateKyma(t, func(k *v1beta2.Kyma) { k.Spec.Channel = "regular" })
}

func channelFor(i int) string {
	if i%2 == 0 {
		return "regular"
	}
	return "fast"
}

func rotatedIssuer(t *testing.T, before, after *corev1.Secret) bool {
	t.Helper()
	b, err := pki.ParseCerts(before.Data["tls.crt"])
	require.NoError(t, err)
	a, err := pki.ParseCerts(after.Data["tls.crt"])
	require.NoError(t, err)
	return !bytes.Equal(a[0].AuthorityKeyId, b[0].AuthorityKeyId)
}
