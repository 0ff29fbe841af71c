package pki_test

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
)

func newCA(t *testing.T, alg pki.KeyAlgorithm) *pki.CA {
	t.Helper()
	key, err := pki.GenerateKey(alg)
	require.NoError(t, err)
	ca, err := pki.NewCA("test-ca", key, time.Now(), time.Hour)
	require.NoError(t, err)
	return ca
}

func TestIssueVerifiesForItsUsage(t *testing.T) {
	tests := []struct {
		name   string
		alg    pki.KeyAlgorithm
		usage  pki.Usage
		ok     []x509.ExtKeyUsage
		reject []x509.ExtKeyUsage
	}{
		{"client", pki.ECDSAP256, pki.UsageClient, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{"server", pki.RSA2048, pki.UsageServer, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{"both", pki.ECDSAP256, pki.UsageClient | pki.UsageServer, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ca := newCA(t, tc.alg)
			certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{
				CommonName: "runtime-1", DNSNames: []string{"agent.kyma-system.svc"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
				Usage: tc.usage, NotBefore: time.Now(), Duration: time.Hour,
			}, tc.alg)
			require.NoError(t, err)
			certs, err := pki.ParseCerts(certPEM)
			require.NoError(t, err)
			key, err := pki.ParseKey(keyPEM)
			require.NoError(t, err)
			require.NoError(t, pki.KeyMatches(certs[0], key))
			assert.Equal(t, "runtime-1", certs[0].Subject.CommonName)

			roots := x509.NewCertPool()
			roots.AddCert(ca.Cert)
			for _, u := range tc.ok {
				_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{u}})
				assert.NoError(t, err, "usage %v", u)
			}
			for _, u := range tc.reject {
				_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{u}})
				assert.Error(t, err, "usage %v must be rejected", u)
			}
		})
	}
}

func TestLeafNeverOutlivesItsCA(t *testing.T) {
	ca := newCA(t, pki.ECDSAP256)
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	leaf, err := ca.Sign(pki.LeafRequest{CommonName: "x", Usage: pki.UsageClient, NotBefore: time.Now(), Duration: 90 * 24 * time.Hour}, key.Public())
	require.NoError(t, err)
	assert.Equal(t, ca.Cert.NotAfter, leaf.NotAfter)
}

func TestKeyAlgorithms(t *testing.T) {
	for alg, check := range map[pki.KeyAlgorithm]func(any) bool{
		pki.ECDSAP256: func(k any) bool { _, ok := k.(*ecdsa.PrivateKey); return ok },
		pki.RSA2048:   func(k any) bool { r, ok := k.(*rsa.PrivateKey); return ok && r.N.BitLen() == 2048 },
	} {
		key, err := pki.GenerateKey(alg)
		require.NoError(t, err)
		assert.True(t, check(key), alg)
		encoded, err := pki.EncodeKey(key)
		require.NoError(t, err)
		parsed, err := pki.ParseKey(encoded)
		require.NoError(t, err)
		assert.True(t, check(parsed), alg)
	}
	_, err := pki.GenerateKey("dsa")
	assert.ErrorContains(t, err, `"dsa"`)
}

func TestParseKeyAlgorithm(t *testing.T) {
	tests := map[string]struct {
		want    pki.KeyAlgorithm
		wantErr bool
	}{
		"":           {want: pki.ECDSAP256},
		"ecdsa-p256": {want: pki.ECDSAP256},
		"rsa-2048":   {want: pki.RSA2048},
		"rsa-4096":   {want: pki.RSA4096},
		"rsa-1024":   {wantErr: true},
	}
	for in, tc := range tests {
		got, err := pki.ParseKeyAlgorithm(in)
		if tc.wantErr {
			assert.ErrorContains(t, err, in)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}

func TestParseLegacyKeyFormats(t *testing.T) {
	rsaKey, err := pki.GenerateKey(pki.RSA2048)
	require.NoError(t, err)
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey.(*rsa.PrivateKey))})
	_, err = pki.ParseKey(pkcs1)
	require.NoError(t, err)

	ecKey, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	der, err := x509.MarshalECPrivateKey(ecKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	_, err = pki.ParseKey(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	require.NoError(t, err)
}

func TestBadInputGetsClearErrors(t *testing.T) {
	ca := newCA(t, pki.ECDSAP256)
	caPEM, caKeyPEM, err := ca.PEM()
	require.NoError(t, err)
	other := newCA(t, pki.ECDSAP256)
	_, otherKeyPEM, err := other.PEM()
	require.NoError(t, err)
	leafPEM, leafKeyPEM, err := ca.Issue(pki.LeafRequest{CommonName: "leaf", Usage: pki.UsageClient, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)

	tests := []struct {
		name    string
		cert    []byte
		key     []byte
		wantErr string
	}{
		{"garbage certificate", []byte("not pem"), caKeyPEM, "no certificate found"},
		{"corrupt certificate block", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}}), caKeyPEM, "PEM block 0"},
		{"garbage key", caPEM, []byte("-----BEGIN NOTHING-----\n-----END NOTHING-----\n"), "no private key found"},
		{"corrupt key", caPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), "parsing PKCS#8"},
		{"key of another CA", caPEM, otherKeyPEM, "does not match"},
		{"leaf is not a CA", leafPEM, leafKeyPEM, "is not a CA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pki.ParseCA(tc.cert, tc.key)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	parsed, err := pki.ParseCA(caPEM, caKeyPEM)
	require.NoError(t, err)
	assert.True(t, parsed.Cert.Equal(ca.Cert))
}

func TestRequestsAreValidated(t *testing.T) {
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	_, err = pki.NewCA("", key, time.Now(), time.Hour)
	assert.ErrorContains(t, err, "common name")
	_, err = pki.NewCA("ca", key, time.Now(), 0)
	assert.ErrorContains(t, err, "duration")

	ca := newCA(t, pki.ECDSAP256)
	_, err = ca.Sign(pki.LeafRequest{Usage: pki.UsageClient, Duration: time.Hour}, key.Public())
	assert.ErrorContains(t, err, "common name")
	_, err = ca.Sign(pki.LeafRequest{CommonName: "x", Duration: time.Hour}, key.Public())
	assert.ErrorContains(t, err, "usage")
	_, err = ca.Sign(pki.LeafRequest{CommonName: "x", Usage: pki.UsageClient}, key.Public())
	assert.ErrorContains(t, err, "duration")
}
