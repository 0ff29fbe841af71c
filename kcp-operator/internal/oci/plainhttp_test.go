package oci_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// TestPlainHTTPOnlyForListedRegistries: a registry host comes from a
// module's descriptor. Only a host listed as insecure is reached over plain
// HTTP; loopback is no exception (go-containerregistry would try plain HTTP
// for it, and for private addresses), so a descriptor cannot make the
// operator GET an internal address in clear text.
func TestPlainHTTPOnlyForListedRegistries(t *testing.T) {
	reg := startRegistry(t)
	data := []byte("kind: ConfigMap\n")
	ref := oci.Ref{Repository: reg.repo(moduleRepo), Digest: reg.pushBlob(data)}
	_, port, _ := strings.Cut(reg.host, ":")
	for _, tc := range []struct {
		name   string
		listed []string
		ok     bool
	}{
		{name: "nothing listed: loopback is not plain HTTP", listed: nil},
		{name: "another host", listed: []string{"registry.example.com", "localhost"}},
		{name: "another port of the host", listed: []string{"127.0.0.1:1"}},
		{name: "the host and port", listed: []string{"127.0.0.1:" + port}, ok: true},
		{name: "the host, any port", listed: []string{"127.0.0.1"}, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := reg.total()
			f, err := oci.NewFetcher(oci.Options{InsecureRegistries: tc.listed})
			require.NoError(t, err)
			blob, err := f.Fetch(t.Context(), ref, nil)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, data, blob.Data)
				return
			}
			require.ErrorIs(t, err, oci.ErrPlainHTTPRefused)
			assert.Contains(t, err.Error(), "--insecure-registries")
			assert.Equal(t, before, reg.total(), "the registry got no request")
		})
	}
}

// TestRedirectToAnUnlistedPlainHTTPHostIsRefused: a listed registry that
// redirects a download to another plain-HTTP address does not get the
// operator to follow it.
func TestRedirectToAnUnlistedPlainHTTPHostIsRefused(t *testing.T) {
	var reached atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte("metadata"))
	}))
	t.Cleanup(internal.Close)
	redirecting := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if strings.Contains(req.URL.Path, "/blobs/") && req.Method == http.MethodGet {
				http.Redirect(w, req, internal.URL+"/latest/meta-data", http.StatusTemporaryRedirect)
				return
			}
			next.ServeHTTP(w, req)
		})
	}
	reg := startRegistry(t, redirecting)
	ref := oci.Ref{Repository: reg.repo(moduleRepo), Digest: reg.pushBlob([]byte("kind: ConfigMap\n"))}
	f, err := oci.NewFetcher(oci.Options{InsecureRegistries: []string{reg.host}})
	require.NoError(t, err)
	_, err = f.Fetch(t.Context(), ref, nil)
	require.ErrorIs(t, err, oci.ErrPlainHTTPRefused)
	assert.Zero(t, reached.Load(), "the redirect target got no request")
}
