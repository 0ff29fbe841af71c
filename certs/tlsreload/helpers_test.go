package tlsreload_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
)

// testCA is a CA for one test, with shortcuts to issue PEM material.
type testCA struct {
	t  *testing.T
	ca *pki.CA
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA(name, key, time.Now(), 24*time.Hour)
	require.NoError(t, err)
	return &testCA{t: t, ca: ca}
}

func (c *testCA) certPEM() []byte { return pki.EncodeCerts(c.ca.Cert) }

func (c *testCA) issue(cn string, usage pki.Usage, notBefore time.Time) (certPEM, keyPEM []byte) {
	c.t.Helper()
	certPEM, keyPEM, err := c.ca.Issue(pki.LeafRequest{
		CommonName: cn, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
		Usage: usage, NotBefore: notBefore, Duration: time.Hour,
	}, pki.ECDSAP256)
	require.NoError(c.t, err)
	return certPEM, keyPEM
}

func (c *testCA) client(cn string) (certPEM, keyPEM []byte) {
	return c.issue(cn, pki.UsageClient, time.Now())
}

func (c *testCA) server() (certPEM, keyPEM []byte) {
	return c.issue("listener", pki.UsageServer, time.Now())
}

func bundle(pems ...[]byte) []byte {
	var out []byte
	for _, p := range pems {
		out = append(out, p...)
	}
	return out
}

// writeFile replaces a file the way a Secret volume does: write aside, rename.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func writeTLSFiles(t *testing.T, dir string, cert, key, ca []byte) (certFile, keyFile, caFile string) {
	t.Helper()
	certFile, keyFile, caFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	writeFile(t, certFile, cert)
	writeFile(t, keyFile, key)
	writeFile(t, caFile, ca)
	return certFile, keyFile, caFile
}
