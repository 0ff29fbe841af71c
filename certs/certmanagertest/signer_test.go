package certmanagertest

import (
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/certs/pki"
)

func TestNeedsIssuanceMirrorsCertManagersTriggers(t *testing.T) {
	now := time.Now()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA("ca", key, now, 365*24*time.Hour)
	require.NoError(t, err)
	cert := &cmv1.Certificate{Spec: cmv1.CertificateSpec{
		CommonName: "runtime-1", DNSNames: []string{"a.example.com"}, IPAddresses: []string{"127.0.0.1"},
		Duration: &metav1.Duration{Duration: 90 * 24 * time.Hour}, RenewBefore: &metav1.Duration{Duration: 30 * 24 * time.Hour},
		IssuerRef: cmmeta.IssuerReference{Name: "ca"}, Usages: []cmv1.KeyUsage{cmv1.UsageClientAuth},
	}}
	certPEM, keyPEM, err := issueLeaf(ca, cert, pki.ECDSAP256, now)
	require.NoError(t, err)
	_, otherKey, err := issueLeaf(ca, cert, pki.ECDSAP256, now)
	require.NoError(t, err)
	secret := func(c, k []byte, issuerName string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{cmv1.IssuerNameAnnotationKey: issuerName}},
			Data:       map[string][]byte{corev1.TLSCertKey: c, corev1.TLSPrivateKeyKey: k},
		}
	}
	issuing := cert.DeepCopy()
	issuing.Status.Conditions = []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionIssuing, Status: cmmeta.ConditionTrue}}
	renamed := cert.DeepCopy()
	renamed.Spec.CommonName = "runtime-2"

	tests := []struct {
		name   string
		cert   *cmv1.Certificate
		secret *corev1.Secret
		exists bool
		now    time.Time
		want   string
	}{
		{"current", cert, secret(certPEM, keyPEM, "ca"), true, now, ""},
		{"no secret", cert, nil, false, now, "DoesNotExist"},
		{"issuing condition", issuing, secret(certPEM, keyPEM, "ca"), true, now, "Issuing"},
		{"garbage", cert, secret([]byte("x"), keyPEM, "ca"), true, now, "InvalidCertificate"},
		{"wrong key", cert, secret(certPEM, otherKey, "ca"), true, now, "InvalidKeyPair"},
		{"spec changed", renamed, secret(certPEM, keyPEM, "ca"), true, now, "SecretMismatch"},
		{"other issuer", cert, secret(certPEM, keyPEM, "other"), true, now, "IncorrectIssuer"},
		{"renewal time", cert, secret(certPEM, keyPEM, "ca"), true, now.Add(61 * 24 * time.Hour), "Renewing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, needsIssuance(tc.cert, tc.secret, tc.exists, tc.now, ca.Cert.NotAfter))
		})
	}
	// A certificate cut to its CA's end is not renewed over and over.
	leaves, err := pki.ParseCerts(certPEM)
	require.NoError(t, err)
	caEnd := leaves[0].NotAfter // as if the CA ended with this certificate
	assert.Empty(t, needsIssuance(cert, secret(certPEM, keyPEM, "ca"), true, now.Add(61*24*time.Hour), caEnd))
}
