package pkitest

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
)

// CA is a certificate authority of one test.
type CA struct {
	t  testing.TB
	CA *pki.CA
}

// NewCA creates a root CA valid for a day.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA(name, key, time.Now(), 24*time.Hour)
	require.NoError(t, err)
	return &CA{t: t, CA: ca}
}

// Intermediate creates a CA signed by c.
func (c *CA) Intermediate(name string) *CA {
	c.t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(c.t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(12 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.CA.Cert, key.Public(), c.CA.Key)
	require.NoError(c.t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(c.t, err)
	return &CA{t: c.t, CA: &pki.CA{Cert: cert, Key: key}}
}

// PEM returns the CA certificate as PEM.
func (c *CA) PEM() []byte { return pki.EncodeCerts(c.CA.Cert) }

// Bundle returns a tlsreload.Bundle of c.
func (c *CA) Bundle() *tlsreload.Bundle {
	c.t.Helper()
	b, err := tlsreload.NewBundle(c.PEM())
	require.NoError(c.t, err)
	return b
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	CertPEM, KeyPEM []byte
	Cert            *x509.Certificate
}

// IssueAt issues a leaf for cn, valid for localhost and 127.0.0.1 with the
// given usages, for an hour from notBefore (backdated by the pki package's
// clock skew allowance).
func (c *CA) IssueAt(cn string, usage pki.Usage, notBefore time.Time) Leaf {
	c.t.Helper()
	certPEM, keyPEM, err := c.CA.Issue(pki.LeafRequest{
		CommonName: cn, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		Usage: usage, NotBefore: notBefore, Duration: time.Hour,
	}, pki.ECDSAP256)
	require.NoError(c.t, err)
	certs, err := pki.ParseCerts(certPEM)
	require.NoError(c.t, err)
	return Leaf{CertPEM: certPEM, KeyPEM: keyPEM, Cert: certs[0]}
}

// Issue is IssueAt from now, as PEM.
func (c *CA) Issue(cn string, usage pki.Usage) (certPEM, keyPEM []byte) {
	c.t.Helper()
	l := c.IssueAt(cn, usage, time.Now())
	return l.CertPEM, l.KeyPEM
}

// Client issues a client certificate with CN runtimeID.
func (c *CA) Client(runtimeID string) Leaf { return c.IssueAt(runtimeID, pki.UsageClient, time.Now()) }

// Server issues a server certificate for localhost and 127.0.0.1.
func (c *CA) Server() Leaf { return c.IssueAt("listener", pki.UsageServer, time.Now()) }

// KeyPair returns the leaf as a tlsreload.KeyPair.
func (l Leaf) KeyPair(t testing.TB) *tlsreload.KeyPair {
	t.Helper()
	kp, err := tlsreload.NewKeyPair(l.CertPEM, l.KeyPEM)
	require.NoError(t, err)
	return kp
}

// TLSCertificate returns the leaf as a tls.Certificate.
func (l Leaf) TLSCertificate(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	require.NoError(t, err)
	return c
}

// Concat joins PEM documents into one bundle.
func Concat(pems ...[]byte) []byte {
	var out []byte
	for _, p := range pems {
		out = append(out, p...)
	}
	return out
}

// IssueWithoutCN issues a client certificate with an empty subject, which
// the pki package refuses to do: it identifies no runtime.
func (c *CA) IssueWithoutCN() Leaf {
	c.t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(c.t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"nameless.example"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.CA.Cert, key.Public(), c.CA.Key)
	require.NoError(c.t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(c.t, err)
	keyPEM, err := pki.EncodeKey(key)
	require.NoError(c.t, err)
	return Leaf{CertPEM: pki.EncodeCerts(cert), KeyPEM: keyPEM, Cert: cert}
}
