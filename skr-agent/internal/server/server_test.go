package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	s, err := server.Listen(t.Context(), "127.0.0.1:0", server.OpsHandler(reg, health), nil, logr.Discard())
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
	s, err := server.Listen(t.Context(), "127.0.0.1:0", http.NewServeMux(), nil, logr.Discard())
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	_, err = server.Listen(t.Context(), s.Addr().String(), http.NewServeMux(), nil, logr.Discard())
	require.Error(t, err)
	assert.Contains(t, err.Error(), s.Addr().String())
}
