package signature_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ecdsaKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

func ed25519Key(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return k
}

func privatePEM(t *testing.T, k crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func publicPEM(t *testing.T, k crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// authority is a CA that issues certificates for tests.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newCA(t *testing.T, name string) *authority {
	t.Helper()
	key := ecdsaKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &authority{cert: cert, key: key}
}

func (a *authority) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.cert.Raw})
}

// issue certifies key for code signing from notBefore to notAfter.
func (a *authority) issue(t *testing.T, cn string, key crypto.Signer, notBefore, notAfter time.Time, usage ...x509.ExtKeyUsage) []byte {
	t.Helper()
	if usage == nil {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

const layerDigest = "sha256:3b2c8a6ef0d7f1a25c6e4b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d"

func defaultCR() map[string]any {
	return map[string]any{
		"apiVersion": "sample.kyma-project.io/v1alpha1", "kind": "Sample",
		"metadata": map[string]any{"name": "default"}, "spec": map[string]any{"replicas": int64(1)},
	}
}

// descriptorDoc is a descriptor as modulectl writes it, with the digest
// of cr (nil: none) as a label.
func descriptorDoc(t *testing.T, cr map[string]any, access map[string]any) map[string]any {
	t.Helper()
	if access == nil {
		access = map[string]any{"type": "localBlob", "localReference": layerDigest, "mediaType": "application/x-tar"}
	}
	component := map[string]any{
		"name": "kyma-project.io/module/sample", "version": "1.0.0", "provider": "kyma-project.io",
		"repositoryContexts": []any{map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example.com/modules", "componentNameMapping": "urlPath"}},
		"resources":          []any{map[string]any{"name": "raw-manifest", "type": "directory", "relation": "local", "version": "1.0.0", "access": access}},
		"sources":            []any{}, "componentReferences": []any{},
	}
	if cr != nil {
		d, err := signature.ObjectDigest(cr)
		require.NoError(t, err)
		component["labels"] = []any{map[string]any{"name": signature.DefaultCRLabel, "value": d}}
	}
	return map[string]any{"meta": map[string]any{"schemaVersion": "v2"}, "component": component}
}

// signed adds the signature of signer to doc and returns the JSON.
func signed(t *testing.T, doc map[string]any, signer *signature.Signer) []byte {
	t.Helper()
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	sig, err := signer.Sign(raw)
	require.NoError(t, err)
	withSig := map[string]any{}
	for k, v := range doc {
		withSig[k] = v
	}
	withSig["signatures"] = []signature.Signature{sig}
	raw, err = json.Marshal(withSig)
	require.NoError(t, err)
	return raw
}

func template(raw []byte, cr map[string]any, signatureName string) *v1beta2.ModuleTemplate {
	t := &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "sample-1.0.0", Namespace: "kcp-system", UID: "uid-1", ResourceVersion: "1",
			Labels: map[string]string{shared.ModuleNameLabel: "sample"}},
		Spec: v1beta2.ModuleTemplateSpec{ModuleName: "sample", Version: "1.0.0", Descriptor: runtime.RawExtension{Raw: raw}},
	}
	if signatureName != "" {
		t.Labels[shared.SignatureLabel] = signatureName
	}
	if cr != nil {
		t.Spec.Data = &unstructured.Unstructured{Object: cr}
	}
	return t
}

func signer(t *testing.T, key crypto.Signer, certPEM []byte) *signature.Signer {
	t.Helper()
	s, err := signature.NewSigner("", privatePEM(t, key), certPEM, now)
	require.NoError(t, err)
	return s
}

func trust(t *testing.T, entries map[string][]byte) *signature.Trust {
	t.Helper()
	tr, err := signature.ParseTrust("test anchors", entries)
	require.NoError(t, err)
	return tr
}
