package signature_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

func TestVerifyTemplate(t *testing.T) {
	ecKey, edKey, otherKey := ecdsaKey(t), ed25519Key(t), ecdsaKey(t)
	ca, intermediate, stranger := newCA(t, "module CA"), newCA(t, "intermediate CA"), newCA(t, "someone else's CA")
	// The intermediate, certified by the CA, certifies the leaf.
	intermediate.cert = mustParse(t, ca.issueCA(t, intermediate))
	leafKey := ecdsaKey(t)
	leaf := intermediate.issue(t, "module release", leafKey, now.Add(-time.Hour), now.Add(30*24*time.Hour))
	chain := append(append([]byte{}, leaf...), intermediate.pem()...)
	expiredKey := ecdsaKey(t)
	expired := ca.issue(t, "old release", expiredKey, now.Add(-60*24*time.Hour), now.Add(-24*time.Hour))
	serverKey := ecdsaKey(t)
	serverCert := ca.issue(t, "web server", serverKey, now.Add(-time.Hour), now.Add(time.Hour), x509.ExtKeyUsageServerAuth)

	keys := trust(t, map[string][]byte{"release.pub": publicPEM(t, ecKey), "ed.pub": publicPEM(t, edKey)})
	cas := trust(t, map[string][]byte{"ca.crt": ca.pem()})
	cr := defaultCR()
	good := func(s *signature.Signer) *v1beta2.ModuleTemplate {
		return template(signed(t, descriptorDoc(t, cr, nil), s), cr, signature.DefaultName)
	}
	tests := []struct {
		name       string
		template   *v1beta2.ModuleTemplate
		trust      *signature.Trust
		wantSigner string
		wantReason string
		wantMsg    string
	}{
		{name: "ECDSA key", template: good(signer(t, ecKey, nil)), trust: keys, wantSigner: "key release.pub"},
		{name: "Ed25519 key", template: good(signer(t, edKey, nil)), trust: keys, wantSigner: "key ed.pub"},
		{name: "certificate chain to a trusted CA", template: good(signer(t, leafKey, chain)), trust: cas, wantSigner: "CN=module release"},
		{name: "no signature label", template: template(signed(t, descriptorDoc(t, cr, nil), signer(t, ecKey, nil)), cr, ""),
			trust: keys, wantReason: signature.ReasonUnsigned, wantMsg: "not signed (no label " + shared.SignatureLabel},
		{name: "label names a signature the descriptor lacks", template: template(signed(t, descriptorDoc(t, cr, nil), signer(t, ecKey, nil)), cr, "other"),
			trust: keys, wantReason: signature.ReasonUnsigned, wantMsg: `no signature "other" (it has: "module-signature")`},
		{name: "unsigned descriptor", template: template(mustJSON(t, descriptorDoc(t, cr, nil)), cr, signature.DefaultName),
			trust: keys, wantReason: signature.ReasonUnsigned, wantMsg: "it has: none"},
		{name: "tampered descriptor", template: edited(good(signer(t, ecKey, nil)), `"provider":"kyma-project.io"`, `"provider":"mallory"`),
			trust: keys, wantReason: signature.ReasonModified, wantMsg: "changed after it was signed"},
		{name: "a layer swapped for another digest", template: edited(good(signer(t, ecKey, nil)), layerDigest, "sha256:"+strings.Repeat("e", 64)),
			trust: keys, wantReason: signature.ReasonModified, wantMsg: "changed after it was signed"},
		{name: "wrong key", template: good(signer(t, otherKey, nil)), trust: keys,
			wantReason: signature.ReasonUntrusted, wantMsg: "does not verify with any trusted key (2 key(s) and 0 CA(s) of test anchors)"},
		{name: "a bare key where only CAs are trusted", template: good(signer(t, ecKey, nil)), trust: cas, wantReason: signature.ReasonUntrusted},
		{name: "expired certificate", template: good(signerAt(t, expiredKey, expired, now.Add(-30*24*time.Hour))), trust: cas,
			wantReason: signature.ReasonExpired, wantMsg: "CN=old release is expired or not yet valid"},
		{name: "certificate of another CA", template: good(signer(t, leafKey, chain)), trust: trust(t, map[string][]byte{"ca.crt": stranger.pem()}),
			wantReason: signature.ReasonUntrusted, wantMsg: "not trusted by"},
		{name: "certificate without code signing", template: withCertificate(t, good(signer(t, serverKey, ca.issue(t, "release", serverKey, now.Add(-time.Hour), now.Add(time.Hour)))), serverCert),
			trust: cas, wantReason: signature.ReasonUntrusted, wantMsg: "incompatible key usage"},
		{name: "certificate where only keys are trusted", template: good(signer(t, leafKey, chain)), trust: keys,
			wantReason: signature.ReasonUntrusted, wantMsg: "hold no CA certificate"},
		{name: "forged value under a genuine certificate", template: forged(t, good(signer(t, leafKey, chain))), trust: cas, wantReason: signature.ReasonBadSignature},
		{name: "layer referenced by tag", template: template(signed(t, descriptorDoc(t, cr, map[string]any{"type": "ociArtifact", "imageReference": "registry.example.com/sample:1.0.0"}),
			signer(t, ecKey, nil)), cr, signature.DefaultName), trust: keys, wantReason: signature.ReasonNotCovered, wantMsg: "referenced by tag"},
		{name: "default CR changed after signing", template: withCR(good(signer(t, ecKey, nil)), map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}),
			trust: keys, wantReason: signature.ReasonModified, wantMsg: "default CR (spec.data) was changed"},
		{name: "default CR not recorded", template: template(signed(t, descriptorDoc(t, nil, nil), signer(t, ecKey, nil)), cr, signature.DefaultName),
			trust: keys, wantReason: signature.ReasonNotCovered, wantMsg: "not covered by the signature"},
		{name: "default CR removed", template: withCR(good(signer(t, ecKey, nil)), nil), trust: keys, wantReason: signature.ReasonNotCovered},
		{name: "spec.version differs", template: withVersion(good(signer(t, ecKey, nil)), "9.9.9"), trust: keys, wantReason: signature.ReasonNotCovered},
		{name: "no anchors", template: good(signer(t, ecKey, nil)), wantReason: signature.ReasonNoTrust},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := signature.VerifyTemplate(tc.template, tc.trust, now)
			if tc.wantReason != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantReason, signature.ReasonOf(err), err.Error())
				assert.Contains(t, err.Error(), tc.wantMsg)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, v.Signer, tc.wantSigner)
			assert.Equal(t, signature.DefaultName, v.Name)
		})
	}
}

func TestCertificateExpiryIsReported(t *testing.T) {
	ca, key := newCA(t, "CA"), ecdsaKey(t)
	cert := ca.issue(t, "release", key, now.Add(-time.Hour), now.Add(time.Hour))
	cr := defaultCR()
	tmpl := template(signed(t, descriptorDoc(t, cr, nil), signer(t, key, cert)), cr, signature.DefaultName)
	anchors := trust(t, map[string][]byte{"ca.crt": ca.pem()})

	v, err := signature.VerifyTemplate(tmpl, anchors, now)
	require.NoError(t, err)
	assert.True(t, v.Expires.Equal(now.Add(time.Hour).Truncate(time.Second)), "the certificate's end: %s", v.Expires)
	_, err = signature.VerifyTemplate(tmpl, anchors, now.Add(2*time.Hour))
	assert.Equal(t, signature.ReasonExpired, signature.ReasonOf(err), "the same template after the certificate's end")
}

func TestNewSignerRefusesWhatCannotSign(t *testing.T) {
	key, other := ecdsaKey(t), ecdsaKey(t)
	ca := newCA(t, "CA")
	tests := map[string]struct {
		key, cert []byte
		want      string
	}{
		"no key":                {[]byte("hello"), nil, "no PEM private key"},
		"RSA key":               {[]byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"), nil, "RSA PRIVATE KEY is not supported"},
		"another key's cert":    {privatePEM(t, key), ca.issue(t, "x", other, now.Add(-time.Hour), now.Add(time.Hour)), "is not the certificate of the signing key"},
		"expired certificate":   {privatePEM(t, key), ca.issue(t, "x", key, now.Add(-2*time.Hour), now.Add(-time.Hour)), "expired on"},
		"future certificate":    {privatePEM(t, key), ca.issue(t, "x", key, now.Add(time.Hour), now.Add(2*time.Hour)), "valid only from"},
		"server certificate":    {privatePEM(t, key), ca.issue(t, "x", key, now.Add(-time.Hour), now.Add(time.Hour), x509.ExtKeyUsageServerAuth), "does not allow code signing"},
		"certificate not a PEM": {privatePEM(t, key), []byte("nope"), "no PEM CERTIFICATE"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := signature.NewSigner("s", tc.key, tc.cert, now)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestSigningIsDeterministic(t *testing.T) {
	doc := mustJSON(t, descriptorDoc(t, defaultCR(), nil))
	for _, s := range []*signature.Signer{signer(t, ecdsaKey(t), nil), signer(t, ed25519Key(t), nil)} {
		a, err := s.Sign(doc)
		require.NoError(t, err)
		b, err := s.Sign(doc)
		require.NoError(t, err)
		assert.Equal(t, a, b, "publishing the same module again must give the same descriptor")
	}
}

func TestParseTrustRefusesWhatItCannotUse(t *testing.T) {
	tests := map[string]struct {
		entries map[string][]byte
		want    string
	}{
		"empty":         {map[string][]byte{}, "holds no PEM public key or CA certificate"},
		"not PEM":       {map[string][]byte{"key.pub": []byte("ssh-ed25519 AAAA")}, "key.pub: no PEM block"},
		"a private key": {map[string][]byte{"oops.pem": privatePEM(t, ecdsaKey(t))}, "oops.pem: a PEM PRIVATE KEY block"},
		"broken key":    {map[string][]byte{"k": []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")}, "k: PUBLIC KEY"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := signature.ParseTrust("Secret kcp-system/module-trust", tc.entries)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "Secret kcp-system/module-trust")
		})
	}
}

func TestVerifyDescriptorRefusesUnknownFormats(t *testing.T) {
	key := ecdsaKey(t)
	raw := signed(t, descriptorDoc(t, nil, nil), signer(t, key, nil))
	anchors := trust(t, map[string][]byte{"k": publicPEM(t, key)})
	for _, tc := range []struct{ from, to, want string }{
		{signature.NormalisationV1, "jsonNormalisation/v1", "is not supported"},
		{signature.MediaTypeHex, "application/x-pem-file", "media type"},
	} {
		_, err := signature.VerifyDescriptor(bytes.Replace(raw, []byte(tc.from), []byte(tc.to), 1), signature.DefaultName, anchors, now)
		assert.Equal(t, signature.ReasonMalformed, signature.ReasonOf(err))
		assert.ErrorContains(t, err, tc.want)
	}
	_, err := signature.VerifyDescriptor([]byte(`{"meta":{},"signatures":{"name":"x"}}`), "x", anchors, now)
	assert.Equal(t, signature.ReasonMalformed, signature.ReasonOf(err))
}

// issueCA certifies another CA's key as an intermediate.
func (a *authority) issueCA(t *testing.T, sub *authority) []byte {
	t.Helper()
	tmpl := *sub.cert
	tmpl.Raw, tmpl.RawTBSCertificate, tmpl.RawSubjectPublicKeyInfo, tmpl.RawSubject, tmpl.RawIssuer = nil, nil, nil, nil, nil
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, a.cert, sub.key.Public(), a.key)
	require.NoError(t, err)
	return der
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

// signerAt is a signer as it was at a time: signing with a certificate
// that has expired since.
func signerAt(t *testing.T, key crypto.Signer, certPEM []byte, at time.Time) *signature.Signer {
	t.Helper()
	s, err := signature.NewSigner("", privatePEM(t, key), certPEM, at)
	require.NoError(t, err)
	return s
}

// withCertificate puts another certificate into the template's
// signature; the certificate is not part of what is signed.
func withCertificate(t *testing.T, tmpl *v1beta2.ModuleTemplate, certPEM []byte) *v1beta2.ModuleTemplate {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(tmpl.Spec.Descriptor.Raw, &doc))
	sig := doc["signatures"].([]any)[0].(map[string]any)["signature"].(map[string]any)
	sig["certificate"] = string(certPEM)
	tmpl.Spec.Descriptor.Raw = mustJSON(t, doc)
	return tmpl
}

func edited(tmpl *v1beta2.ModuleTemplate, from, to string) *v1beta2.ModuleTemplate {
	tmpl.Spec.Descriptor.Raw = bytes.Replace(tmpl.Spec.Descriptor.Raw, []byte(from), []byte(to), 1)
	return tmpl
}

func withCR(tmpl *v1beta2.ModuleTemplate, cr map[string]any) *v1beta2.ModuleTemplate {
	if cr == nil {
		tmpl.Spec.Data = nil
		return tmpl
	}
	tmpl.Spec.Data.Object = cr
	return tmpl
}

func withVersion(tmpl *v1beta2.ModuleTemplate, v string) *v1beta2.ModuleTemplate {
	tmpl.Spec.Version = v
	return tmpl
}

// forged replaces the signature value by one of the same length.
func forged(t *testing.T, tmpl *v1beta2.ModuleTemplate) *v1beta2.ModuleTemplate {
	t.Helper()
	sigs, err := signature.Signatures(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	value := sigs[0].Signature.Value
	return edited(tmpl, value, strings.Repeat("0", 16)+value[16:])
}
