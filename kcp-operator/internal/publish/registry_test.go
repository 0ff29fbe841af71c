package publish_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/require"
)

// testRegistry is go-containerregistry's real in-process registry, served
// over plain HTTP on 127.0.0.1, with a request log and optional wrappers.
type testRegistry struct {
	host string

	mu       sync.Mutex
	requests []string // "METHOD /path"
	corrupt  string   // a digest whose blob is served altered
}

func startRegistry(t testing.TB, wrappers ...func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	for _, w := range wrappers {
		h = w(h)
	}
	r := &testRegistry{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		corrupt := r.corrupt
		r.mu.Unlock()
		if corrupt != "" && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/blobs/"+corrupt) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := bytes.ToUpper(rec.Body.Bytes()) // same length, other content
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// base is a registry base URL for modules on this registry.
func (r *testRegistry) base() string { return r.host + "/modules" }

func (r *testRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// writes counts the requests that changed something.
func (r *testRegistry) writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, req := range r.requests {
		if strings.HasPrefix(req, http.MethodPost) || strings.HasPrefix(req, http.MethodPut) || strings.HasPrefix(req, http.MethodPatch) {
			n++
		}
	}
	return n
}

func (r *testRegistry) corruptBlob(digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.corrupt = digest
}

// requireBasicAuth lets only user:password through and answers everything
// else with a Basic challenge, as registries behind basic auth do.
func requireBasicAuth(user, password string) func(http.Handler) http.Handler {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get("Authorization") != want {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, req)
		})
	}
}

// closedAddress is a 127.0.0.1 address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// dockerConfig writes a Docker config with one login and points
// DOCKER_CONFIG at it, as `docker login` leaves it.
func dockerConfig(t *testing.T, host, user, password string) {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	raw, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o600))
	t.Setenv("DOCKER_CONFIG", dir)
}
