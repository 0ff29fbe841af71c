package tlssecret_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
)

func material(t testing.TB, cn string) (tlssecret.Material, *pki.CA) {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA("ca-"+cn, key, time.Now(), time.Hour)
	require.NoError(t, err)
	cert, leafKey, err := ca.Issue(pki.LeafRequest{CommonName: cn, Usage: pki.UsageClient, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)
	return tlssecret.Material{CABundle: pki.EncodeCerts(ca.Cert), Cert: cert, Key: leafKey}, ca
}

func TestBadMaterialGetsClearErrors(t *testing.T) {
	good, _ := material(t, "runtime-1")
	other, _ := material(t, "runtime-2")
	tests := []struct {
		name    string
		data    map[string][]byte
		wantErr string
	}{
		{"empty", map[string][]byte{}, "missing [ca.crt tls.crt tls.key]"},
		{"no key", map[string][]byte{"ca.crt": good.CABundle, "tls.crt": good.Cert}, "missing [tls.key]"},
		{"bundle is not PEM", map[string][]byte{"ca.crt": []byte("nope"), "tls.crt": good.Cert, "tls.key": good.Key}, "ca.crt: no certificate found"},
		{"certificate is not PEM", map[string][]byte{"ca.crt": good.CABundle, "tls.crt": []byte("nope"), "tls.key": good.Key}, "tls.crt and tls.key: certificate: no certificate found"},
		{"key of another certificate", map[string][]byte{"ca.crt": good.CABundle, "tls.crt": good.Cert, "tls.key": other.Key}, "does not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlssecret.FromSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "k-webhook-tls"}, Data: tc.data})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Contains(t, err.Error(), "kcp-system/k-webhook-tls", "the error names the Secret")
		})
	}
	m, err := tlssecret.FromData(good.Data())
	require.NoError(t, err)
	assert.True(t, m.Equal(good))
}

func TestHashSeesEveryChange(t *testing.T) {
	a, _ := material(t, "a")
	b, _ := material(t, "b")
	assert.Equal(t, a.Hash(), tlssecret.Material{CABundle: a.CABundle, Cert: a.Cert, Key: a.Key}.Hash(), "same content, same hash")
	for name, m := range map[string]tlssecret.Material{
		"bundle": {CABundle: b.CABundle, Cert: a.Cert, Key: a.Key},
		"cert":   {CABundle: a.CABundle, Cert: b.Cert, Key: a.Key},
		"key":    {CABundle: a.CABundle, Cert: a.Cert, Key: b.Key},
		// Bytes moving from one part to the next must change the hash.
		"boundary": {CABundle: append(append([]byte{}, a.CABundle...), a.Cert[:1]...), Cert: a.Cert[1:], Key: a.Key},
	} {
		assert.NotEqual(t, a.Hash(), m.Hash(), name)
	}
}

func TestLoadsIntoReloadables(t *testing.T) {
	a, caA := material(t, "a")
	b, caB := material(t, "b")
	kp, err := a.KeyPair()
	require.NoError(t, err)
	bundle, err := a.Bundle()
	require.NoError(t, err)
	assert.Equal(t, "a", kp.Leaf().Subject.CommonName)
	assert.True(t, bundle.Certificates()[0].Equal(caA.Cert))

	changed, err := b.UpdateReloadable(kp, bundle)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "b", kp.Leaf().Subject.CommonName)
	assert.True(t, bundle.Certificates()[0].Equal(caB.Cert))

	changed, err = b.UpdateReloadable(kp, bundle)
	require.NoError(t, err)
	assert.False(t, changed)

	broken := tlssecret.Material{CABundle: a.CABundle, Cert: a.Cert, Key: b.Key}
	_, err = broken.UpdateReloadable(kp, bundle)
	require.ErrorContains(t, err, "does not match")
	assert.Equal(t, "b", kp.Leaf().Subject.CommonName, "invalid material changes nothing")
	assert.True(t, bundle.Certificates()[0].Equal(caB.Cert), "invalid material changes nothing")

	_, err = tlssecret.Material{}.Bundle()
	assert.ErrorContains(t, err, "no ca.crt")
}
