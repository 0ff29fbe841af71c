package tlsreload_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
)

// serve starts an HTTPS server that answers with the CN of the client.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		TLSConfig:         cfg,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // rejected handshakes are the point of these tests
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cn := ""
			if len(r.TLS.PeerCertificates) > 0 {
				cn = r.TLS.PeerCertificates[0].Subject.CommonName
			}
			_, _ = io.WriteString(w, cn)
		}),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func get(t *testing.T, c *http.Client, addr string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/", nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func clientFor(cfg *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}, Timeout: 10 * time.Second}
}

// anyError marks cases that the server rejects: with TLS 1.3 the client sees
// that only after its side of the handshake, as whatever error its HTTP
// stack makes of the alert.
const anyError = "*"

func TestMutualTLS(t *testing.T) {
	trusted, untrusted := newTestCA(t, "trusted"), newTestCA(t, "untrusted")
	srvCert, srvKey := trusted.server()
	srvKP, err := tlsreload.NewKeyPair(srvCert, srvKey)
	require.NoError(t, err)
	clientCAs, err := tlsreload.NewBundle(trusted.certPEM())
	require.NoError(t, err)
	addr := serve(t, tlsreload.ServerConfig(srvKP, clientCAs))

	expiredCert, expiredKey := trusted.issue("expired", pki.UsageClient, time.Now().Add(-3*time.Hour))
	serverOnlyCert, serverOnlyKey := trusted.issue("server-only", pki.UsageServer, time.Now())
	goodCert, goodKey := trusted.client("runtime-1")
	foreignCert, foreignKey := untrusted.client("runtime-1")

	tests := []struct {
		name       string
		cert, key  []byte
		roots      []byte
		serverName string
		wantCN     string
		wantErr    string
	}{
		{name: "trusted client", cert: goodCert, key: goodKey, roots: trusted.certPEM(), wantCN: "runtime-1"},
		{name: "trusted client by DNS name", cert: goodCert, key: goodKey, roots: trusted.certPEM(), serverName: "localhost", wantCN: "runtime-1"},
		{name: "client from another CA", cert: foreignCert, key: foreignKey, roots: trusted.certPEM(), wantErr: anyError},
		{name: "no client certificate", roots: trusted.certPEM(), wantErr: anyError},
		{name: "expired client certificate", cert: expiredCert, key: expiredKey, roots: trusted.certPEM(), wantErr: anyError},
		{name: "certificate without client usage", cert: serverOnlyCert, key: serverOnlyKey, roots: trusted.certPEM(), wantErr: anyError},
		{name: "server from an untrusted CA", cert: goodCert, key: goodKey, roots: untrusted.certPEM(), wantErr: "server certificate"},
		{name: "no name to verify", cert: goodCert, key: goodKey, roots: trusted.certPEM(), serverName: "-", wantErr: "no server name"},
		{name: "server name not in the certificate", cert: goodCert, key: goodKey, roots: trusted.certPEM(), serverName: "kcp.example.com", wantErr: "kcp.example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var kp *tlsreload.KeyPair
			if tc.cert != nil {
				var err error
				kp, err = tlsreload.NewKeyPair(tc.cert, tc.key)
				require.NoError(t, err)
			}
			roots, err := tlsreload.NewBundle(tc.roots)
			require.NoError(t, err)
			name := tc.serverName
			switch name {
			case "":
				name = "127.0.0.1"
			case "-":
				name = "" // an IP address sends no SNI, so nothing is left to verify
			}
			cn, err := get(t, clientFor(tlsreload.ClientConfig(kp, roots, name)), addr)
			if tc.wantErr != "" {
				require.Error(t, err)
				if tc.wantErr != anyError {
					assert.Contains(t, err.Error(), tc.wantErr)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantCN, cn)
		})
	}
}

func TestKeyPairRejectsBadInputAndKeepsTheOld(t *testing.T) {
	ca := newTestCA(t, "ca")
	cert1, key1 := ca.client("one")
	cert2, key2 := ca.client("two")
	kp, err := tlsreload.NewKeyPair(cert1, key1)
	require.NoError(t, err)

	changed, err := kp.Set(cert1, key1)
	require.NoError(t, err)
	assert.False(t, changed, "same material is no change")

	_, err = kp.Set(cert2, key1)
	assert.ErrorContains(t, err, "does not match")
	_, err = kp.Set([]byte("garbage"), key1)
	assert.ErrorContains(t, err, "certificate")
	assert.Equal(t, "one", kp.Leaf().Subject.CommonName, "rejected material must not replace the current")

	changed, err = kp.Set(cert2, key2)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "two", kp.Leaf().Subject.CommonName)
}

func TestBundleRejectsEmptyAndVerifies(t *testing.T) {
	a, b := newTestCA(t, "a"), newTestCA(t, "b")
	bun, err := tlsreload.NewBundle(bundle(a.certPEM(), b.certPEM()))
	require.NoError(t, err)
	assert.Len(t, bun.Certificates(), 2)

	_, err = bun.Set([]byte("# no certificates here\n"))
	assert.ErrorContains(t, err, "no certificate")
	assert.Len(t, bun.Certificates(), 2, "an empty bundle must not replace the current one")

	cert, _ := b.client("runtime-2")
	certs, err := pki.ParseCerts(cert)
	require.NoError(t, err)
	_, err = bun.Verify(certs, 0, time.Now())
	require.NoError(t, err)

	_, err = bun.Set(a.certPEM())
	require.NoError(t, err)
	_, err = bun.Verify(certs, 0, time.Now())
	assert.True(t, errors.Is(err, tlsreload.ErrUntrusted), "b is no longer trusted: %v", err)
	_, err = bun.Verify(nil, 0, time.Now())
	assert.ErrorIs(t, err, tlsreload.ErrUntrusted)
}
