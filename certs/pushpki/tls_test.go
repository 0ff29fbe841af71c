package pushpki_test

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/tlsreload"
)

// serve starts an HTTPS server as the listener would run it: mTLS with a
// reloading key pair and client bundle. GET / answers the client's CN;
// GET /runtime/<id> plays the listener's identity check and answers 403
// unless the client certificate's CN is <id>.
func serve(t testing.TB, cfg *tls.Config) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		TLSConfig:         cfg,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // rejected handshakes are part of these tests
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cn := r.TLS.PeerCertificates[0].Subject.CommonName
			if id, ok := strings.CutPrefix(r.URL.Path, "/runtime/"); ok && id != cn {
				http.Error(w, "certificate of "+cn+" is not for runtime "+id, http.StatusForbidden)
				return
			}
			_, _ = io.WriteString(w, cn)
		}),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func clientFor(cfg *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}, Timeout: 10 * time.Second}
}

// get fetches path and reports the body, status, and whether an open
// connection carried the request.
func get(t *testing.T, c *http.Client, addr, path string) (body string, status int, reused bool, err error) {
	t.Helper()
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, reused, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, reused, err
}

// agentClient is an HTTPS client as the agent runs it: its certificate and
// the bundle it verifies the endpoint with, both reloadable.
func agentClient(kp *tlsreload.KeyPair, roots *tlsreload.Bundle) *http.Client {
	return clientFor(tlsreload.ClientConfig(kp, roots, "127.0.0.1"))
}
