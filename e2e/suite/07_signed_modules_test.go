package suite

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// This scenario's channels: the versions it publishes go nowhere else.
const (
	signedChannel = "signed"
	forgedChannel = "forged"
)

func TestSignedModules(t *testing.T) {
	if h.ModuleTrustSecret == "" {
		t.Skip("clusters mode: the chart's operator runs without a module trust Secret")
	}
	rt := runtime(1)
	step(t, "Given a runtime without modules whose Kyma enforces module signatures (label %s=enforce)", shared.SignaturePolicyLabel)
	withoutModules(t, rt)
	updateKyma(t, rt, func(k *v1beta2.Kyma) { k.Labels[shared.SignaturePolicyLabel] = "enforce" })
	t.Cleanup(func() { restoreAfterSignatures(t, rt) })

	dir := t.TempDir()
	trusted, trustedPub := signingKey(t, dir, "release")
	stranger, _ := signingKey(t, dir, "stranger")
	step(t, "And the operator's trust Secret %s holding the module team's public key", h.ModuleTrustSecret)
	trustKey(t, trustedPub)

	step(t, "And the sample module published with modulectl as 1.1.0 in channel %s, signed with that key,", signedChannel)
	require.NoError(t, h.PublishFrom(t.Context(), "1.1.0", signedChannel, "1.0.0", "--sign-key", trusted))
	step(t, "and as 1.2.0 in channel %s, signed with a key the operator does not trust", forgedChannel)
	require.NoError(t, h.PublishFrom(t.Context(), "1.2.0", forgedChannel, "1.0.0", "--sign-key", stranger))

	step(t, "When the runtime admin adds the module from channel %s", signedChannel)
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) {
		k.Spec.Modules = []v1beta2.Module{{Name: harness.SampleModule, Channel: signedChannel}}
	})
	step(t, "Then the signed module installs: the Kyma is Ready, its signatures verified")
	eventuallyKyma(t, rt, "Ready with 1.1.0, verified", func(k *v1beta2.Kyma) bool {
		return ready(k) && len(k.Status.Modules) == 1 && k.Status.Modules[0].Version == "1.1.0" &&
			meta.IsStatusConditionTrue(k.Status.Conditions, "ModuleSignatures")
	})

	step(t, "When the runtime admin switches the module to channel %s", forgedChannel)
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules[0].Channel = forgedChannel })
	step(t, "Then 1.2.0 is refused: the module is Error with the reason, and 1.1.0 stays installed")
	k := eventuallyKyma(t, rt, "the module Error for its signature", func(k *v1beta2.Kyma) bool {
		return len(k.Status.Modules) == 1 && k.Status.Modules[0].State == shared.StateError
	})
	msg := k.Status.Modules[0].Message
	require.Contains(t, msg, "does not verify with any trusted key")
	require.Contains(t, msg, "refused by the module signature policy enforce")
	require.True(t, strings.Contains(msg, harness.SampleModule+"-1.2.0"), msg)
	mf := &v1beta2.Manifest{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-" + harness.SampleModule}, mf))
	require.Equal(t, "1.1.0", mf.Spec.Version, "nothing of the refused version is applied")
}

// signingKey writes a new ECDSA key and its public key as PEM files.
func signingKey(t *testing.T, dir, name string) (private string, public []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	private = filepath.Join(dir, name+".key")
	require.NoError(t, os.WriteFile(private, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	der, err = x509.MarshalPKIXPublicKey(key.Public())
	require.NoError(t, err)
	return private, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// trustKey makes the operator's trust Secret hold exactly this public key.
func trustKey(t *testing.T, public []byte) {
	t.Helper()
	ns, name, _ := strings.Cut(h.ModuleTrustSecret, "/")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	_, err := ctrl.CreateOrUpdate(t.Context(), h.KCP.Client, secret, func() error {
		secret.Data = map[string][]byte{"release.pub": public}
		return nil
	})
	require.NoError(t, err)
}

// restoreAfterSignatures takes the scenario's module out of the runtime and
// the policy label off the Kyma, so that later scenarios start as usual.
func restoreAfterSignatures(t *testing.T, rt *harness.Runtime) {
	ctx := context.Background() // the test's context has ended
	rk := &v1beta2.Kyma{}
	key := client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: shared.DefaultRuntimeKymaName}
	if err := rt.Client.Get(ctx, key, rk); err == nil {
		patch := client.MergeFrom(rk.DeepCopy())
		rk.Spec.Modules = nil
		if err := rt.Client.Patch(ctx, rk, patch); err != nil {
			t.Errorf("removing the scenario's module: %v", err)
		}
	}
	k := &v1beta2.Kyma{}
	if err := h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k); err == nil {
		patch := client.MergeFrom(k.DeepCopy())
		delete(k.Labels, shared.SignaturePolicyLabel)
		if err := h.KCP.Client.Patch(ctx, k, patch); err != nil {
			t.Errorf("removing the signature policy label: %v", err)
		}
	}
}
