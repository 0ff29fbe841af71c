package pkitest

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifecycle-manager/certs/pki"
)

// CA issues test certificates.
type CA struct {
	tb testing.TB
	ca *pki.CA
}

// NewCA creates a CA valid for a day.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	if err != nil {
		tb.Fatal(err)
	}
	ca, err := pki.NewCA(name, key, time.Now(), 24*time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return &CA{tb: tb, ca: ca}
}

// PEM is the CA certificate.
func (c *CA) PEM() []byte { return pki.EncodeCerts(c.ca.Cert) }

// Issue returns a certificate and key for cn, valid for localhost and
// 127.0.0.1 with the given usages.
func (c *CA) Issue(cn string, usage pki.Usage) (certPEM, keyPEM []byte) {
	c.tb.Helper()
	certPEM, keyPEM, err := c.ca.Issue(pki.LeafRequest{
		CommonName: cn, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		Usage: usage, NotBefore: time.Now(), Duration: time.Hour,
	}, pki.ECDSAP256)
	if err != nil {
		c.tb.Fatal(err)
	}
	return certPEM, keyPEM
}

// Files are the paths of a set of TLS files.
type Files struct {
	Cert, Key, CA string
}

// WriteFiles writes tls.crt, tls.key and ca.crt into dir.
func WriteFiles(tb testing.TB, dir string, cert, key, ca []byte) Files {
	tb.Helper()
	f := Files{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")}
	f.Write(tb, cert, key, ca)
	return f
}

// Write replaces the files' contents; nil leaves a file as it is.
func (f Files) Write(tb testing.TB, cert, key, ca []byte) {
	tb.Helper()
	for _, w := range []struct {
		path string
		data []byte
	}{{f.Key, key}, {f.Cert, cert}, {f.CA, ca}} {
		if w.data != nil {
			replace(tb, w.path, w.data)
		}
	}
}

// replace writes aside and renames, as a Secret volume update does.
func replace(tb testing.TB, path string, data []byte) {
	tb.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}
