package tlsreload_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/tlsreload"
)

// reusedGet is get that also reports whether an open connection carried it.
func reusedGet(t *testing.T, c *http.Client, addr string) (cn string, reused bool, err error) {
	t.Helper()
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/", nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	if err != nil {
		return "", reused, err
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	return string(buf[:n]), reused, nil
}

// TestCARotationKeepsConnectionsWorking walks through a whole CA rotation
// with a server and a client that load their material from files, as the
// listener and the agent do, and checks at every step that an open
// connection keeps working and new connections get the current material.
func TestCARotationKeepsConnectionsWorking(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old"), newTestCA(t, "new")
	log := testr.New(t)

	srvCert, srvKey := oldCA.server()
	sCert, sKey, sCA := writeTLSFiles(t, t.TempDir(), srvCert, srvKey, oldCA.certPEM())
	server, err := tlsreload.WatchFiles(tlsreload.Files{CertFile: sCert, KeyFile: sKey, CAFile: sCA}, 0, tlsreload.Hooks{}, log)
	require.NoError(t, err)
	addr := serve(t, tlsreload.ServerConfig(server.KeyPair, server.Bundle))

	cliCert, cliKey := oldCA.client("runtime-1")
	cCert, cKey, cCA := writeTLSFiles(t, t.TempDir(), cliCert, cliKey, oldCA.certPEM())
	agent, err := tlsreload.WatchFiles(tlsreload.Files{CertFile: cCert, KeyFile: cKey, CAFile: cCA}, 0, tlsreload.Hooks{}, log)
	require.NoError(t, err)
	longLived := clientFor(tlsreload.ClientConfig(agent.KeyPair, agent.Bundle, "127.0.0.1"))
	fresh := func() *http.Client {
		return clientFor(tlsreload.ClientConfig(agent.KeyPair, agent.Bundle, "127.0.0.1"))
	}

	cn, _, err := reusedGet(t, longLived, addr)
	require.NoError(t, err)
	require.Equal(t, "runtime-1", cn)

	step := func(name string) {
		t.Helper()
		server.Reload()
		agent.Reload()
		_, reused, err := reusedGet(t, longLived, addr)
		require.NoError(t, err, "%s: the open connection broke", name)
		assert.True(t, reused, "%s: the open connection was not reused", name)
		cn, _, err := reusedGet(t, fresh(), addr)
		require.NoError(t, err, "%s: a new connection failed", name)
		assert.Equal(t, "runtime-1", cn)
	}

	// 1. The new CA joins both trust bundles.
	both := bundle(oldCA.certPEM(), newCA.certPEM())
	writeFile(t, sCA, both)
	writeFile(t, cCA, both)
	step("new CA added to the bundles")

	// 2. The client certificate is re-issued by the new CA.
	cliCert2, cliKey2 := newCA.client("runtime-1")
	writeFile(t, cCert, cliCert2)
	writeFile(t, cKey, cliKey2)
	step("client certificate re-issued")
	assert.Equal(t, "new", agent.KeyPair.Leaf().Issuer.CommonName)

	// 3. The server certificate switches to the new CA.
	srvCert2, srvKey2 := newCA.server()
	writeFile(t, sCert, srvCert2)
	writeFile(t, sKey, srvKey2)
	step("server certificate switched")
	issuer := ""
	c := clientFor(tlsreload.ClientConfig(agent.KeyPair, agent.Bundle, "127.0.0.1"))
	c.Transport.(*http.Transport).TLSClientConfig.VerifyConnection = func(cs tls.ConnectionState) error {
		issuer = cs.PeerCertificates[0].Issuer.CommonName
		return nil
	}
	_, _, err = reusedGet(t, c, addr)
	require.NoError(t, err)
	assert.Equal(t, "new", issuer, "new connections must see the new server certificate")

	// 4. The old CA leaves the bundles.
	writeFile(t, sCA, newCA.certPEM())
	writeFile(t, cCA, newCA.certPEM())
	step("old CA removed")

	oldKP, err := tlsreload.NewKeyPair(cliCert, cliKey)
	require.NoError(t, err)
	_, _, err = reusedGet(t, clientFor(tlsreload.ClientConfig(oldKP, agent.Bundle, "127.0.0.1")), addr)
	require.Error(t, err, "a certificate of the removed CA must be rejected")
}

func TestWatcherPollsAndReportsOnce(t *testing.T) {
	ca := newTestCA(t, "ca")
	cert1, key1 := ca.client("one")
	certFile, keyFile, caFile := writeTLSFiles(t, t.TempDir(), cert1, key1, ca.certPEM())

	var reloaded, failed atomic.Int32
	hooks := tlsreload.Hooks{
		Reloaded: func(string) { reloaded.Add(1) },
		Failed:   func(string, error) { failed.Add(1) },
	}
	w, err := tlsreload.WatchFiles(tlsreload.Files{CertFile: certFile, KeyFile: keyFile, CAFile: caFile}, 10*time.Millisecond, hooks, logr.Discard())
	require.NoError(t, err)
	go func() { _ = w.Start(t.Context()) }()

	// A key that does not match: rejected, reported once, old pair kept.
	_, key2 := ca.client("two")
	writeFile(t, keyFile, key2)
	require.Eventually(t, func() bool { return failed.Load() == 1 }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // several polls of the same broken file; a negative check needs a wait
	assert.Equal(t, int32(1), failed.Load(), "a file that stays broken is reported once")
	assert.Equal(t, "one", w.KeyPair.Leaf().Subject.CommonName)

	cert3, key3 := ca.client("three")
	writeFile(t, certFile, cert3)
	writeFile(t, keyFile, key3)
	require.Eventually(t, func() bool { return w.KeyPair.Leaf().Subject.CommonName == "three" }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, int32(1), reloaded.Load())
}

func TestWatchFilesRejectsBadSetups(t *testing.T) {
	ca := newTestCA(t, "ca")
	cert, key := ca.client("x")
	certFile, keyFile, caFile := writeTLSFiles(t, t.TempDir(), cert, key, ca.certPEM())
	_, wrongKey := ca.client("y")
	_, wrongKeyFile, _ := writeTLSFiles(t, t.TempDir(), cert, wrongKey, ca.certPEM())

	tests := []struct {
		name    string
		files   tlsreload.Files
		wantErr string
	}{
		{"nothing", tlsreload.Files{}, "no certificate"},
		{"certificate without key", tlsreload.Files{CertFile: certFile}, "key file"},
		{"missing file", tlsreload.Files{CertFile: certFile, KeyFile: keyFile + ".gone"}, "no such file"},
		{"mismatched key", tlsreload.Files{CertFile: certFile, KeyFile: wrongKeyFile}, "does not match"},
		{"CA file that is a key", tlsreload.Files{CAFile: keyFile}, "no certificate found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlsreload.WatchFiles(tc.files, 0, tlsreload.Hooks{}, logr.Discard())
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	w, err := tlsreload.WatchFiles(tlsreload.Files{CAFile: caFile}, 0, tlsreload.Hooks{}, logr.Discard())
	require.NoError(t, err)
	assert.Nil(t, w.KeyPair)
	assert.Len(t, w.Bundle.Certificates(), 1)
}
