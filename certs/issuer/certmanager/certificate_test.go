package certmanager

import (
	"net"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/pki"
)

func TestCertificateNames(t *testing.T) {
	o := config.Defaults() // namespace kcp-system
	tests := []struct {
		secret   types.NamespacedName
		wantCert string
	}{
		{types.NamespacedName{Namespace: "kcp-system", Name: "k1-webhook-tls"}, "k1-webhook-tls"},
		// A namespaced Issuer serves its own namespace only: the Certificate
		// stays in the PKI namespace and carries the Secret's namespace.
		{types.NamespacedName{Namespace: "istio-system", Name: "endpoint-tls"}, "istio-system.endpoint-tls"},
	}
	for _, tc := range tests {
		key := CertificateKey(o, tc.secret)
		assert.Equal(t, types.NamespacedName{Namespace: "kcp-system", Name: tc.wantCert}, key)
		assert.Equal(t, tc.wantCert+"-issued", IssuedSecretKey(key).Name)
	}
}

func TestDesiredSpec(t *testing.T) {
	tests := []struct {
		alg      pki.KeyAlgorithm
		purpose  issuer.Purpose
		wantAlg  cmv1.PrivateKeyAlgorithm
		wantSize int
		client   bool
	}{
		{pki.ECDSAP256, issuer.PurposeAgent, cmv1.ECDSAKeyAlgorithm, 256, true},
		{pki.RSA2048, issuer.PurposeAgent, cmv1.RSAKeyAlgorithm, 2048, true},
		{pki.RSA4096, issuer.PurposeEndpoint, cmv1.RSAKeyAlgorithm, 4096, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.alg)+"/"+string(tc.purpose), func(t *testing.T) {
			o := config.Defaults()
			o.KeyAlgorithm, o.IssuerName, o.IssuerKind = tc.alg, "kcp-ca", "ClusterIssuer"
			b := &Backend{opts: o}
			spec := b.desiredSpec(issuer.Request{
				Purpose: tc.purpose, CommonName: "runtime-1", DNSNames: []string{"a.example.com"},
				IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
			}, "x-issued")
			assert.Equal(t, "runtime-1", spec.CommonName)
			assert.Equal(t, []string{"127.0.0.1"}, spec.IPAddresses)
			assert.Equal(t, "x-issued", spec.SecretName)
			assert.Equal(t, "kcp-ca", spec.IssuerRef.Name)
			assert.Equal(t, "ClusterIssuer", spec.IssuerRef.Kind)
			assert.Equal(t, tc.wantAlg, spec.PrivateKey.Algorithm)
			assert.Equal(t, tc.wantSize, spec.PrivateKey.Size)
			assert.Equal(t, cmv1.RotationPolicyAlways, spec.PrivateKey.RotationPolicy)
			assert.Equal(t, o.CertDuration, spec.Duration.Duration)
			assert.Equal(t, o.CertRenewBefore, spec.RenewBefore.Duration)
			assert.Contains(t, spec.Usages, cmv1.UsageServerAuth)
			assert.Equal(t, tc.client, contains(spec.Usages, cmv1.UsageClientAuth))
		})
	}
}

func contains(us []cmv1.KeyUsage, u cmv1.KeyUsage) bool {
	for _, x := range us {
		if x == u {
			return true
		}
	}
	return false
}
