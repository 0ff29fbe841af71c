package kyma_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// The suite's operator runs with --module-signature-policy=off and the
// trust Secret trustSecret (see testOptions); these tests raise the policy
// per Kyma with its label, so that no other test is checked.
const trustSecret = "module-trust"

// signingKeys are the suite's signers: a trusted key, a key nobody
// trusts, and a trusted CA's certificate that has expired.
type signingKeys struct {
	trusted, stranger, expired *signature.Signer
}

var keys *signingKeys

// trustKeys creates the trust Secret (once) and returns the signers.
func trustKeys(t *testing.T) *signingKeys {
	t.Helper()
	if keys != nil {
		return keys
	}
	trusted, stranger, old := newECKey(t), newECKey(t), newECKey(t)
	caCert, expiredCert := expiredChain(t, old)
	der, err := x509.MarshalPKIXPublicKey(trusted.Public())
	require.NoError(t, err)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: trustSecret, Namespace: kcpNamespace}}
	_, err = ctrl.CreateOrUpdate(t.Context(), kcp.Client, secret, func() error {
		secret.Data = map[string][]byte{
			"release.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
			"ca.crt":      caCert,
		}
		return nil
	})
	require.NoError(t, err)
	keys = &signingKeys{
		trusted:  newSigner(t, trusted, nil, time.Now()),
		stranger: newSigner(t, stranger, nil, time.Now()),
		// Signed while the certificate was valid.
		expired: newSigner(t, old, expiredCert, time.Now().Add(-36*time.Hour)),
	}
	return keys
}

func newECKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

func newSigner(t *testing.T, key crypto.Signer, certPEM []byte, at time.Time) *signature.Signer {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	s, err := signature.NewSigner("release", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), certPEM, at)
	require.NoError(t, err)
	return s
}

// expiredChain returns a CA and a code signing certificate it issued for
// key that expired a day ago.
func expiredChain(t *testing.T, key crypto.Signer) (caPEM, leafPEM []byte) {
	t.Helper()
	caKey := newECKey(t)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "module CA"},
		NotBefore: time.Now().Add(-72 * time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "old release"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, key.Public(), caKey)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
}

// publishSigned publishes m in channel regular and signs its template's
// descriptor as modulectl does: the default CR's digest in a label, the
// signature in the descriptor, the signature label on the template. edit,
// when given, changes the descriptor after signing.
func publishSigned(t *testing.T, m module, s *signature.Signer, edit ...func(string) string) {
	t.Helper()
	publish(t, m)
	tmpl := &v1beta2.ModuleTemplate{}
	key := client.ObjectKey{Namespace: kcpNamespace, Name: m.Name + "-" + m.Version}
	require.NoError(t, kcp.Client.Get(t.Context(), key, tmpl))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(tmpl.Spec.Descriptor.Raw, &doc))
	if tmpl.Spec.Data != nil {
		digest, err := signature.ObjectDigest(tmpl.Spec.Data.Object)
		require.NoError(t, err)
		doc["component"].(map[string]any)["labels"] = []any{map[string]any{"name": signature.DefaultCRLabel, "value": digest}}
	}
	unsigned, err := json.Marshal(doc)
	require.NoError(t, err)
	sig, err := s.Sign(unsigned)
	require.NoError(t, err)
	doc["signatures"] = []signature.Signature{sig}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	for _, e := range edit {
		raw = []byte(e(string(raw)))
	}
	tmpl.Spec.Descriptor.Raw = raw
	metav1.SetMetaDataLabel(&tmpl.ObjectMeta, shared.SignatureLabel, sig.Name)
	require.NoError(t, kcp.Client.Update(t.Context(), tmpl))
	releaseMeta(t, m.Name, map[string]string{"regular": m.Version})
}

func withPolicy(policy string, modules ...string) func(*v1beta2.Kyma) {
	return func(k *v1beta2.Kyma) {
		k.Labels[shared.SignaturePolicyLabel] = policy
		for _, m := range modules {
			k.Spec.Modules = append(k.Spec.Modules, v1beta2.Module{Name: m})
		}
	}
}

func TestSignedModuleInstallsUnderEnforce(t *testing.T) {
	s := trustKeys(t)
	publishSigned(t, module{Name: "signet", Version: "1.0.0", Data: defaultCR("Signet")}, s.trusted)
	newKyma(t, "signed-enforce", withPolicy("enforce", "signet"))

	eventuallyManifest(t, "signed-enforce-signet", "installed", appliedAll(3))
	k := eventuallyKyma(t, "signed-enforce", "signatures verified", func(k *v1beta2.Kyma) bool {
		return meta.IsStatusConditionTrue(k.Status.Conditions, kymactrl.ConditionModuleSignatures)
	})
	assert.NotEqual(t, shared.StateError, moduleStatus(k, "signet").State)
}

// Under enforce a refused module is the Kyma's Error module with the
// reason, no Manifest is created for it and nothing of it reaches the runtime.
func TestRefusedModulesAreNotAppliedUnderEnforce(t *testing.T) {
	s := trustKeys(t)
	publishSigned(t, module{Name: "forgery", Version: "1.0.0"}, s.stranger)
	publishSigned(t, module{Name: "stale", Version: "1.0.0"}, s.expired)
	publishSigned(t, module{Name: "altered", Version: "1.0.0"}, s.trusted, func(doc string) string {
		return strings.Replace(doc, `"provider":"test"`, `"provider":"mallory"`, 1)
	})
	publish(t, module{Name: "unsealed", Version: "1.0.0"})
	releaseMeta(t, "unsealed", map[string]string{"regular": "1.0.0"})
	newKyma(t, "unsigned-refused", withPolicy("enforce", "forgery", "stale", "altered", "unsealed"))

	want := map[string]string{
		"forgery":  "does not verify with any trusted key",
		"stale":    "CN=old release is expired",
		"altered":  "the descriptor was changed after it was signed",
		"unsealed": "it is not signed (no label operator.kyma-project.io/signature)",
	}
	k := eventuallyKyma(t, "unsigned-refused", "Error with four refused modules", func(k *v1beta2.Kyma) bool {
		for m := range want {
			if ms := moduleStatus(k, m); ms == nil || ms.State != shared.StateError {
				return false
			}
		}
		return k.Status.State == shared.StateError
	})
	for m, reason := range want {
		msg := moduleStatus(k, m).Message
		assert.Contains(t, msg, reason, m)
		assert.Contains(t, msg, "refused by the module signature policy enforce", m)
		_, err := getManifest(t, "unsigned-refused-"+m)
		assert.True(t, apierrors.IsNotFound(err), "no Manifest for %s", m)
		err = runtimeObject(t, "apps/v1", "Deployment", "unsigned-refused", m+"-operator")
		assert.True(t, apierrors.IsNotFound(err), "nothing of %s in the runtime", m)
	}
	assert.True(t, hasEvent(t, "unsigned-refused", "ModuleResolutionFailed"))
}

// A layer that the registry serves other than signed is refused by its
// digest: the signature covers the descriptor, the descriptor the digest.
func TestTamperedLayerOfASignedModuleIsRefused(t *testing.T) {
	s := trustKeys(t)
	publishSigned(t, module{Name: "tainted", Version: "1.0.0"}, s.trusted)
	tmpl := &v1beta2.ModuleTemplate{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "tainted-1.0.0"}, tmpl))
	d, err := descriptor.Parse(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	layer, err := d.LayerOf("raw-manifest")
	require.NoError(t, err)
	defer reg.Corrupt(layer.Digest)()

	newKyma(t, "tainted", withPolicy("enforce", "tainted"))
	mf := eventuallyManifest(t, "tainted-tainted", "Error", manifestState(shared.StateError))
	cond := meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionResources)
	require.NotNil(t, cond)
	assert.Equal(t, "DigestMismatch", cond.Reason)
	assert.Empty(t, mf.Status.Synced, "nothing applied")
	err = runtimeObject(t, "apps/v1", "Deployment", "tainted", "tainted-operator")
	assert.True(t, apierrors.IsNotFound(err), "nothing of the module in the runtime")
	k := eventuallyKyma(t, "tainted", "Error", stateIs(shared.StateError))
	assert.Contains(t, moduleStatus(k, "tainted").Message, "does not match its digest")
}

// Under warn, unsigned and unverified modules are installed, and the Kyma
// says why with a Warning Event and its ModuleSignatures condition.
func TestUnverifiedModulesInstallWithAWarning(t *testing.T) {
	s := trustKeys(t)
	publishSigned(t, module{Name: "mimic", Version: "1.0.0"}, s.stranger)
	publish(t, module{Name: "unmarked", Version: "1.0.0"})
	releaseMeta(t, "unmarked", map[string]string{"regular": "1.0.0"})
	newKyma(t, "lenient", withPolicy("warn", "mimic", "unmarked"))

	for _, m := range []string{"mimic", "unmarked"} {
		eventuallyManifest(t, "lenient-"+m, "installed", appliedAll(3))
	}
	k := eventuallyKyma(t, "lenient", "Warning for its signatures", func(k *v1beta2.Kyma) bool {
		c := meta.FindStatusCondition(k.Status.Conditions, kymactrl.ConditionModuleSignatures)
		return c != nil && c.Status == metav1.ConditionFalse && k.Status.State == shared.StateWarning
	})
	c := meta.FindStatusCondition(k.Status.Conditions, kymactrl.ConditionModuleSignatures)
	assert.Equal(t, kymactrl.ReasonSignatureWarning, c.Reason)
	assert.Contains(t, c.Message, "module mimic: ModuleTemplate kcp-system/mimic-1.0.0: signature \"release\" (ECDSA-SHA256) does not verify with any trusted key")
	assert.Contains(t, c.Message, "module unmarked: ModuleTemplate kcp-system/unmarked-1.0.0: it is not signed")
	require.Eventually(t, func() bool { return hasEvent(t, "lenient", kymactrl.ReasonSignatureWarning) }, timeout, tick)
}
