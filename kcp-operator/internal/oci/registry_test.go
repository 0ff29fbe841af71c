package oci_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// testRegistry is go-containerregistry's real in-process registry served
// over HTTP, with a request log and optional wrappers in front of it.
type testRegistry struct {
	t    testing.TB
	srv  *httptest.Server
	host string

	mu       sync.Mutex
	requests []string // "METHOD /path"
	down     int      // when set, the status of every answer
}

func startRegistry(t testing.TB, wrappers ...func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	for _, w := range wrappers {
		h = w(h)
	}
	r := &testRegistry{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		down := r.down
		r.mu.Unlock()
		if down != 0 {
			http.Error(w, http.StatusText(down), down)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	r.host = strings.TrimPrefix(r.srv.URL, "http://")
	return r
}

// failWith makes every later request fail with status, the auth ping included.
func (r *testRegistry) failWith(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = status
}

// repo returns a repository name on this registry.
func (r *testRegistry) repo(path string) string { return r.host + "/" + path }

// count returns how many requests contained fragment (e.g. a digest).
func (r *testRegistry) count(fragment string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, req := range r.requests {
		if strings.Contains(req, fragment) {
			n++
		}
	}
	return n
}

func (r *testRegistry) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// pushBlob uploads data into moduleRepo with go-containerregistry and
// returns its digest.
func (r *testRegistry) pushBlob(data []byte) string {
	r.t.Helper()
	ref, err := name.NewRepository(r.repo(moduleRepo))
	require.NoError(r.t, err)
	require.NoError(r.t, remote.WriteLayer(ref, static.NewLayer(data, types.MediaType("application/x-yaml"))))
	return oci.Digest(data)
}

// pushArtifact uploads an image with the given layers, tagged, and returns
// the manifest digest.
func (r *testRegistry) pushArtifact(repo, tag string, layers ...v1.Layer) string {
	r.t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.cncf.helm.config.v1+json")
	img, err := mutate.AppendLayers(img, layers...)
	require.NoError(r.t, err)
	ref, err := name.NewTag(r.repo(repo) + ":" + tag)
	require.NoError(r.t, err)
	require.NoError(r.t, remote.Write(ref, img))
	digest, err := img.Digest()
	require.NoError(r.t, err)
	return digest.String()
}

// requireBasicAuth lets only user:password through, answering everything
// else with a Basic challenge, as registries behind basic auth do.
func requireBasicAuth(user, password string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			u, p, ok := req.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test registry"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, req)
		})
	}
}

// fakeCorruptingRegistry serves every blob with its first byte changed: a
// registry (or a proxy in between) that serves wrong content.
func fakeCorruptingRegistry(next http.Handler) http.Handler {
	return rewriteBlobs(next, false, func(body []byte) []byte {
		if len(body) > 0 {
			body[0] ^= 0xff
		}
		return body
	})
}

// fakeChunkedRegistry serves blobs without Content-Length, as a registry
// streaming from storage does.
func fakeChunkedRegistry(next http.Handler) http.Handler {
	return rewriteBlobs(next, true, func(body []byte) []byte { return body })
}

func rewriteBlobs(next http.Handler, chunked bool, rewrite func([]byte) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/blobs/sha256:") {
			next.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, req)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if chunked {
			w.Header().Del("Content-Length")
		}
		w.WriteHeader(rec.Code)
		if chunked {
			w.(http.Flusher).Flush()
		}
		_, _ = w.Write(rewrite(rec.Body.Bytes()))
	})
}

// fakeDistributionRegistry also serves manifests from the blob endpoint, as
// registries built on the distribution project do (pkg/registry does not).
func fakeDistributionRegistry(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/blobs/sha256:") {
			next.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, req)
		if rec.Code == http.StatusNotFound {
			asManifest := req.Clone(req.Context())
			asManifest.URL.Path = strings.Replace(req.URL.Path, "/blobs/", "/manifests/", 1)
			rec = httptest.NewRecorder()
			next.ServeHTTP(rec, asManifest)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// failingBlobs answers every blob download with status.
func failingBlobs(status int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/blobs/sha256:") {
				next.ServeHTTP(w, req)
				return
			}
			http.Error(w, http.StatusText(status), status)
		})
	}
}

// hangingBlobs never answers a blob download until the client gives up.
func hangingBlobs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:") {
			<-req.Context().Done()
			return
		}
		next.ServeHTTP(w, req)
	})
}

// dockerConfigJSON is the .dockerconfigjson of a pull Secret for host.
func dockerConfigJSON(host, user, password string) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth)
}
