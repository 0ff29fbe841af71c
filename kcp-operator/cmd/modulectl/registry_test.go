package main

import (
	"encoding/base64"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/require"
)

// The module of internal/publish's tests.
const testdata = "../../internal/publish/testdata"

func TestMain(m *testing.M) {
	// Hermetic logins: no Docker config of the machine.
	dir, err := os.MkdirTemp("", "modulectl-docker-")
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("DOCKER_CONFIG", dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// startRegistry serves go-containerregistry's real registry over plain
// HTTP on 127.0.0.1 behind basic auth (user "team", password "s3cret") and
// returns its host:port.
func startRegistry(t testing.TB) string {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("team:s3cret"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
