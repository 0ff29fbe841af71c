package testpki

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
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

// Issue issues a leaf valid for an hour from notBefore (backdated by the
// pki package's clock skew allowance).
func (c *CA) Issue(cn string, usage pki.Usage, notBefore time.Time) Leaf {
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

// Client issues a client certificate with CN runtimeID.
func (c *CA) Client(runtimeID string) Leaf { return c.Issue(runtimeID, pki.UsageClient, time.Now()) }

// Server issues a server certificate for localhost and 127.0.0.1.
func (c *CA) Server() Leaf { return c.Issue("listener", pki.UsageServer, time.Now()) }

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

// EnvoyEscape percent-encodes everything but unreserved characters, as
// Envoy encodes the Cert and Chain values.
func EnvoyEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}

// Element writes an X-Forwarded-Client-Cert element for leaf as an Istio
// gateway does: By, Hash, quoted Cert and Chain, quoted Subject, URI.
// chain lists the certificates after the leaf.
func Element(leaf *x509.Certificate, chain ...*x509.Certificate) string {
	sum := sha256.Sum256(leaf.Raw)
	full := pki.EncodeCerts(append([]*x509.Certificate{leaf}, chain...)...)
	return "By=spiffe://cluster.local/ns/kcp-system/sa/lifecycle-manager" +
		";Hash=" + hex.EncodeToString(sum[:]) +
		`;Cert="` + EnvoyEscape(string(pki.EncodeCerts(leaf))) + `"` +
		`;Chain="` + EnvoyEscape(string(full)) + `"` +
		`;Subject="` + strings.ReplaceAll(leaf.Subject.String(), `"`, `\"`) + `";URI=`
}

// WriteFile replaces a file the way a Secret volume does: write aside, rename.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// Files is TLS material on disk.
type Files struct {
	Cert, Key, CA string
}

// WriteTLSFiles writes tls.crt, tls.key and ca.crt into dir.
func WriteTLSFiles(t testing.TB, dir string, leaf Leaf, caPEM []byte) Files {
	t.Helper()
	f := Files{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")}
	WriteFile(t, f.Cert, leaf.CertPEM)
	WriteFile(t, f.Key, leaf.KeyPEM)
	WriteFile(t, f.CA, caPEM)
	return f
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
