package server_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/skr-agent/internal/server"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestOpsServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "skr_agent_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Inc()
	health := &server.Health{}
	s, err := server.Listen(t.Context(), "127.0.0.1:0", server.OpsHandler(reg, health), nil, server.OpsTimeouts, logr.Discard())
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	base := "http://" + s.Addr().String()

	code, _ := get(t, base+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "not ready before the webhook serves")
	health.SetReady(true)
	code, _ = get(t, base+"/readyz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(t, base+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, body := get(t, base+"/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.True(t, strings.Contains(body, "skr_agent_test_total 1"), body)
	code, _ = get(t, base+"/validate/m")
	assert.Equal(t, http.StatusNotFound, code)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, <-served, "a shutdown is no failure")
}

func TestListenFailsOnAPortInUse(t *testing.T) {
	s, err := server.Listen(t.Context(), "127.0.0.1:0", http.NewServeMux(), nil, server.OpsTimeouts, logr.Discard())
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	_, err = server.Listen(t.Context(), s.Addr().String(), http.NewServeMux(), nil, server.OpsTimeouts, logr.Discard())
	require.Error(t, err)
	assert.Contains(t, err.Error(), s.Addr().String())
}

// TestSlowConnectionsEnd: a client that stalls in any phase loses its
// connection once that phase's timeout has passed.
func TestSlowConnectionsEnd(t *testing.T) {
	to := server.Timeouts{ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Write: time.Second, Idle: 300 * time.Millisecond}
	ca := pkitest.NewCA(t, "ca")
	kp, err := tlsreload.NewKeyPair(ca.Issue("server", pki.UsageServer))
	require.NoError(t, err)
	tests := []struct {
		name    string
		tls     bool
		send    string // then nothing more
		atLeast time.Duration
	}{
		{"TLS handshake never starts", true, "", to.ReadHeader},
		{"headers never end", false, "POST /body HTTP/1.1\r\nHost: agent\r\n", to.ReadHeader},
		{"body never ends", false, "POST /body HTTP/1.1\r\nHost: agent\r\nContent-Length: 100\r\n\r\n{", to.Read},
		{"idle after a request", false, "GET /body HTTP/1.1\r\nHost: agent\r\n\r\n", to.Idle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("/body", func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
				}
			})
			var tlsCfg *tls.Config
			if tt.tls {
				tlsCfg = tlsreload.ServerConfig(kp, nil)
			}
			s, err := server.Listen(t.Context(), "127.0.0.1:0", mux, tlsCfg, to, logr.Discard())
			require.NoError(t, err)
			go func() { _ = s.Serve() }()
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })

			// The server's deadlines start when it accepts, after the dial
			// began: measured from there, the timeout is a lower bound.
			start := time.Now()
			conn, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", s.Addr().String())
			require.NoError(t, err)
			defer func() { _ = conn.Close() }()
			_, err = conn.Write([]byte(tt.send))
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = io.Copy(io.Discard, conn) // an answer, if any, then the end
			var netErr net.Error
			require.False(t, errors.As(err, &netErr) && netErr.Timeout(), "the server kept the connection open")
			assert.GreaterOrEqual(t, time.Since(start), tt.atLeast)
		})
	}
}
