package main

import (
	"bytes"
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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// keyFiles writes a new key's private and public halves as PEM files.
func keyFiles(t *testing.T, dir, name string, key crypto.Signer) (private, public string) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	private = filepath.Join(dir, name+".key")
	require.NoError(t, os.WriteFile(private, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	der, err = x509.MarshalPKIXPublicKey(key.Public())
	require.NoError(t, err)
	public = filepath.Join(dir, name+".pub")
	require.NoError(t, os.WriteFile(public, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600))
	return private, public
}

func newECDSA(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// caFiles writes a CA certificate and a code signing certificate it
// issued for key, valid from notBefore to notAfter.
func caFiles(t *testing.T, dir string, key crypto.Signer, notBefore, notAfter time.Time) (caCert, leafCert string) {
	t.Helper()
	caKey := newECDSA(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "module CA"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "sample release"},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, key.Public(), caKey)
	require.NoError(t, err)
	caCert, leafCert = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "release.crt")
	require.NoError(t, os.WriteFile(caCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))
	require.NoError(t, os.WriteFile(leafCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600))
	return caCert, leafCert
}

func verifyArgs(tmpl string, extra ...string) []string {
	return append([]string{"verify", "--template", tmpl, "--insecure", "--username", "team", "--password-stdin"}, extra...)
}

func TestSignedModuleVerifiesWithItsKeyOnly(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	signKey, trusted := keyFiles(t, dir, "release", newECDSA(t))
	_, stranger := keyFiles(t, dir, "stranger", newECDSA(t))
	tmplFile := filepath.Join(dir, "sample.yaml")

	r := modulectl(t, "s3cret", publishArgs(reg, "--sign-key", signKey, "--output", tmplFile, "--verbose")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, `signed     "module-signature" by key sha256:`)
	tmpl, err := publish.ReadTemplate(tmplFile)
	require.NoError(t, err)
	assert.Equal(t, signature.DefaultName, tmpl.Labels[shared.SignatureLabel])
	sigs, err := signature.Signatures(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	require.Len(t, sigs, 1)

	v := modulectl(t, "s3cret", verifyArgs(tmplFile, "--trust", stranger, "--trust", trusted, "--output-format", "json")...)
	require.Equal(t, 0, v.code, v.stderr)
	var verified struct {
		Result publish.Verified `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(v.stdout), &verified))
	require.NotNil(t, verified.Result.Signature)
	assert.Equal(t, "key "+trusted+" ", verified.Result.Signature.Signer[:len("key "+trusted+" ")])

	wrong := modulectl(t, "s3cret", verifyArgs(tmplFile, "--trust", stranger)...)
	assert.Equal(t, publish.ExitVerification, wrong.code)
	assert.Contains(t, wrong.stderr, "does not verify with any trusted key")

	unchecked := modulectl(t, "s3cret", verifyArgs(tmplFile)...)
	require.Equal(t, 0, unchecked.code, unchecked.stderr)
	assert.Contains(t, unchecked.stderr, `warning: the template is signed (signature "module-signature"), but the signature was not checked: pass --trust`)

	again := modulectl(t, "s3cret", publishArgs(reg, "--sign-key", signKey, "--output", tmplFile, "--verbose")...)
	require.Equal(t, 0, again.code, again.stderr)
	assert.Contains(t, again.stderr, "unchanged", "signing is deterministic: the same module gives the same descriptor")
}

func TestTamperedOrUnsignedTemplatesFailVerification(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	signKey, trusted := keyFiles(t, dir, "release", ed25519Key(t))
	signed, plain := filepath.Join(dir, "signed.yaml"), filepath.Join(dir, "plain.yaml")
	require.Equal(t, 0, modulectl(t, "s3cret", publishArgs(reg, "--sign-key", signKey, "--output", signed)...).code)
	require.Equal(t, 0, modulectl(t, "s3cret", publishArgs(reg, "--version", "0.2.0", "--output", plain)...).code)
	edit := func(name, from, to string) string {
		data := mustRead(t, signed)
		require.Contains(t, string(data), from)
		out := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(out, bytes.Replace(data, []byte(from), []byte(to), 1), 0o600))
		return out
	}
	tmpl, err := publish.ReadTemplate(signed)
	require.NoError(t, err)
	d, err := descriptor.Parse(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	layer, err := d.LayerOf("raw-manifest")
	require.NoError(t, err)
	other := "sha256:" + string(bytes.Repeat([]byte("a"), 64))

	tests := map[string]struct {
		file, want string
	}{
		"unsigned":            {plain, "it is not signed (no label operator.kyma-project.io/signature)"},
		"tampered descriptor": {edit("provider.yaml", "provider: kyma-project.io", "provider: mallory"), "changed after it was signed"},
		"tampered layer":      {edit("layer.yaml", layer.Digest, other), "changed after it was signed"},
		"tampered default CR": {edit("cr.yaml", "greeting: hello", "greeting: goodbye"), "default CR (spec.data) was changed after signing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := modulectl(t, "s3cret", verifyArgs(tc.file, "--trust", trusted)...)
			assert.Equal(t, publish.ExitVerification, r.code, r.stderr)
			assert.Contains(t, r.stderr, tc.want)
		})
	}
}

func TestSigningWithACertificate(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	key := newECDSA(t)
	signKey, _ := keyFiles(t, dir, "release", key)
	caCert, leafCert := caFiles(t, dir, key, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	tmplFile := filepath.Join(dir, "sample.yaml")

	r := modulectl(t, "s3cret", publishArgs(reg, "--sign-key", signKey, "--sign-cert", leafCert, "--sign-name", "release", "--output", tmplFile)...)
	require.Equal(t, 0, r.code, r.stderr)
	v := modulectl(t, "s3cret", verifyArgs(tmplFile, "--trust", caCert, "--verbose")...)
	require.Equal(t, 0, v.code, v.stderr)
	assert.Contains(t, v.stderr, `signature  "release" verified: signed by CN=sample release`)

	_, expired := caFiles(t, t.TempDir(), key, time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	r = modulectl(t, "s3cret", publishArgs(reg, "--version", "0.3.0", "--sign-key", signKey, "--sign-cert", expired)...)
	assert.Equal(t, publish.ExitInvalidInput, r.code)
	assert.Contains(t, r.stderr, `signing certificate "CN=sample release" expired on`)

	r = modulectl(t, "s3cret", publishArgs(reg, "--sign-cert", leafCert)...)
	assert.Equal(t, publish.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "--sign-cert and --sign-name need --sign-key")

	r = modulectl(t, "s3cret", verifyArgs(tmplFile, "--trust", signKey)...)
	assert.Equal(t, publish.ExitInvalidInput, r.code, "a private key is no trust anchor")
	assert.Contains(t, r.stderr, "a PEM PRIVATE KEY block: want PUBLIC KEY or CERTIFICATE")
}

func ed25519Key(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return k
}
