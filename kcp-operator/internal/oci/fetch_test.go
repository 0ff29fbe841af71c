package oci_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

const moduleRepo = "modules/component-descriptors/kyma-project.io/module/keda"

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// testRegistries are the test registries' hosts: they serve plain HTTP on
// loopback, which is listed as the operator's --insecure-registries would.
var testRegistries = []string{"127.0.0.1"}

func newFetcher(t *testing.T, opts oci.Options) *oci.Fetcher {
	t.Helper()
	if opts.InsecureRegistries == nil {
		opts.InsecureRegistries = testRegistries
	}
	f, err := oci.NewFetcher(opts)
	require.NoError(t, err)
	return f
}

func newPusher() *oci.Pusher { return oci.NewPusher(oci.Options{InsecureRegistries: testRegistries}) }

func TestFetchBlobThenServeItFromTheCache(t *testing.T) {
	reg := startRegistry(t)
	data := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	digest := reg.pushBlob(data)
	f := newFetcher(t, oci.Options{CacheDir: t.TempDir()})
	ref := oci.Ref{Repository: reg.repo(moduleRepo), Digest: digest}

	blob, err := f.Fetch(t.Context(), ref, nil)
	require.NoError(t, err)
	assert.Equal(t, data, blob.Data)
	assert.Equal(t, digest, blob.Digest)
	assert.Equal(t, 1, reg.count("GET /v2/"+moduleRepo+"/blobs/"+digest))

	before := reg.total()
	blob, err = f.Fetch(t.Context(), ref, nil)
	require.NoError(t, err)
	assert.Equal(t, data, blob.Data)
	assert.Equal(t, before, reg.total(), "a cache hit sends no request, not even the auth ping")
	size, entries := f.CacheSize()
	assert.Equal(t, int64(len(data)), size)
	assert.Equal(t, 1, entries)
}

func TestFetchArtifacts(t *testing.T) {
	t.Run("pkg/registry", func(t *testing.T) { testFetchArtifacts(t, startRegistry(t)) })
	t.Run("distribution-like", func(t *testing.T) { testFetchArtifacts(t, startRegistry(t, fakeDistributionRegistry)) })
}

func testFetchArtifacts(t *testing.T, reg *testRegistry) {
	chart := randomBytes(t, 2048)
	const chartType = "application/vnd.cncf.helm.chart.content.v1.tar.gz"
	manifestDigest := reg.pushArtifact("charts/keda", "1.6.0",
		static.NewLayer(chart, chartType),
		static.NewLayer([]byte("signature"), "application/vnd.cncf.helm.chart.provenance.v1.prov"))
	repo := reg.repo("charts/keda")

	tests := map[string]oci.Ref{
		"by tag":                           {Repository: repo, Tag: "1.6.0", Artifact: true},
		"by manifest digest":               {Repository: repo, Digest: manifestDigest, Artifact: true},
		"by digest not marked (ImageSpec)": {Repository: repo, Digest: manifestDigest},
	}
	for name, ref := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFetcher(t, oci.Options{CacheDir: t.TempDir()})
			blob, err := f.Fetch(t.Context(), ref, nil)
			require.NoError(t, err)
			assert.Equal(t, chart, blob.Data, "the provenance layer is not content")
			assert.Equal(t, oci.Digest(chart), blob.Digest)
			assert.Equal(t, chartType, blob.MediaType)

			before := reg.total()
			_, err = f.Fetch(t.Context(), ref, nil)
			require.NoError(t, err)
			assert.Equal(t, before, reg.total(), "manifest and layer come from the cache (a tag within its TTL)")
		})
	}
}

func TestPinResolvesTagsAndRemembersThemForTheirTTL(t *testing.T) {
	reg := startRegistry(t)
	repo := reg.repo("charts/keda")
	first := reg.pushArtifact("charts/keda", "stable", static.NewLayer([]byte("one"), types.OCILayer))
	f := newFetcher(t, oci.Options{TagTTL: time.Hour})
	fresh := newFetcher(t, oci.Options{TagTTL: -1})

	pinned, err := f.Pin(t.Context(), oci.Ref{Repository: repo, Tag: "stable"}, nil)
	require.NoError(t, err)
	assert.Equal(t, oci.Ref{Repository: repo, Digest: first, Artifact: true}, pinned)

	second := reg.pushArtifact("charts/keda", "stable", static.NewLayer([]byte("two"), types.OCILayer))
	pinned, err = f.Pin(t.Context(), oci.Ref{Repository: repo, Tag: "stable"}, nil)
	require.NoError(t, err)
	assert.Equal(t, first, pinned.Digest, "within the TTL the tag is not asked again")
	pinned, err = fresh.Pin(t.Context(), oci.Ref{Repository: repo, Tag: "stable"}, nil)
	require.NoError(t, err)
	assert.Equal(t, second, pinned.Digest)

	before := reg.total()
	digestRef := oci.Ref{Repository: repo, Digest: second}
	pinned, err = f.Pin(t.Context(), digestRef, nil)
	require.NoError(t, err)
	assert.Equal(t, digestRef, pinned)
	assert.Equal(t, before, reg.total(), "a digest needs no request to pin")
}

func TestWarmCacheSurvivesARestart(t *testing.T) {
	reg := startRegistry(t)
	blob := []byte("kind: Namespace")
	blobDigest := reg.pushBlob(blob)
	chart := randomBytes(t, 512)
	artifact := reg.pushArtifact("charts/keda", "1.0.0", static.NewLayer(chart, types.OCILayer))
	dir := t.TempDir()

	first := newFetcher(t, oci.Options{CacheDir: dir})
	_, err := first.Fetch(t.Context(), oci.Ref{Repository: reg.repo(moduleRepo), Digest: blobDigest}, nil)
	require.NoError(t, err)
	_, err = first.Fetch(t.Context(), oci.Ref{Repository: reg.repo("charts/keda"), Digest: artifact}, nil)
	require.NoError(t, err)
	reg.srv.Close() // from now on every request would fail

	restarted := newFetcher(t, oci.Options{CacheDir: dir})
	size, entries := restarted.CacheSize()
	assert.Equal(t, 3, entries, "blob, manifest and chart layer")
	assert.Positive(t, size)
	got, err := restarted.Fetch(t.Context(), oci.Ref{Repository: reg.repo(moduleRepo), Digest: blobDigest}, nil)
	require.NoError(t, err)
	assert.Equal(t, blob, got.Data)
	got, err = restarted.Fetch(t.Context(), oci.Ref{Repository: reg.repo("charts/keda"), Digest: artifact}, nil)
	require.NoError(t, err, "an artifact digest resolves from the cached manifest")
	assert.Equal(t, chart, got.Data)
}

func TestCorruptCacheFileIsDroppedAndFetchedAgain(t *testing.T) {
	reg := startRegistry(t)
	data := randomBytes(t, 300)
	digest := reg.pushBlob(data)
	dir := t.TempDir()
	ref := oci.Ref{Repository: reg.repo(moduleRepo), Digest: digest}
	_, err := newFetcher(t, oci.Options{CacheDir: dir}).Fetch(t.Context(), ref, nil)
	require.NoError(t, err)

	file := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
	require.NoError(t, os.WriteFile(file, []byte("bit rot"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tmp", "interrupted"), []byte("x"), 0o600))

	restarted := newFetcher(t, oci.Options{CacheDir: dir})
	assert.NoFileExists(t, filepath.Join(dir, "tmp", "interrupted"), "interrupted writes are removed at start")
	got, err := restarted.Fetch(t.Context(), ref, nil)
	require.NoError(t, err)
	assert.Equal(t, data, got.Data)
	assert.Equal(t, 2, reg.count("GET /v2/"+moduleRepo+"/blobs/"+digest), "the corrupt entry was re-verified and fetched again")
	onDisk, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, data, onDisk)
}

func TestCacheEvictsLeastRecentlyUsedAtItsBound(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	f := newFetcher(t, oci.Options{CacheDir: dir, MaxCacheBytes: 2500})
	refs := map[string]oci.Ref{}
	for _, n := range []string{"a", "b", "c"} {
		refs[n] = oci.Ref{Repository: reg.repo(moduleRepo), Digest: reg.pushBlob(randomBytes(t, 1000))}
	}
	fetch := func(n string) {
		t.Helper()
		_, err := f.Fetch(t.Context(), refs[n], nil)
		require.NoError(t, err)
	}
	gets := func(n string) int { return reg.count("GET /v2/" + moduleRepo + "/blobs/" + refs[n].Digest) }

	fetch("a")
	fetch("b")
	fetch("a") // a is now more recently used than b
	fetch("c") // over the bound: b goes
	size, entries := f.CacheSize()
	assert.Equal(t, int64(2000), size)
	assert.Equal(t, 2, entries)
	assert.NoFileExists(t, filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(refs["b"].Digest, "sha256:")))

	fetch("a")
	fetch("c")
	assert.Equal(t, 1, gets("a"))
	assert.Equal(t, 1, gets("c"))
	fetch("b")
	assert.Equal(t, 2, gets("b"), "the evicted blob is downloaded again")

	big := oci.Ref{Repository: reg.repo(moduleRepo), Digest: reg.pushBlob(randomBytes(t, 3000))}
	_, err := f.Fetch(t.Context(), big, nil)
	require.NoError(t, err, "a layer larger than the cache is returned, just not cached")
	size, _ = f.CacheSize()
	assert.LessOrEqual(t, size, int64(2500))

	restarted := newFetcher(t, oci.Options{CacheDir: dir, MaxCacheBytes: 1500})
	size, entries = restarted.CacheSize()
	assert.Equal(t, int64(1000), size, "a smaller bound at start evicts down to it")
	assert.Equal(t, 1, entries)
}

func TestConcurrentFetchesDownloadEachDigestOnce(t *testing.T) {
	reg := startRegistry(t)
	f := newFetcher(t, oci.Options{CacheDir: t.TempDir()})
	blobs := make([][]byte, 6)
	refs := make([]oci.Ref, len(blobs))
	for i := range blobs {
		blobs[i] = randomBytes(t, 4096)
		refs[i] = oci.Ref{Repository: reg.repo(moduleRepo), Digest: reg.pushBlob(blobs[i])}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(refs))
	for range 8 {
		for i := range refs {
			wg.Go(func() {
				got, err := f.Fetch(context.Background(), refs[i], nil)
				if err == nil && !bytes.Equal(got.Data, blobs[i]) {
					err = assert.AnError
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, ref := range refs {
		assert.Equal(t, 1, reg.count("GET /v2/"+moduleRepo+"/blobs/"+ref.Digest), "one download for eight callers")
	}
	_, entries := f.CacheSize()
	assert.Equal(t, len(refs), entries)
}

func TestPrivateRegistry(t *testing.T) {
	reg := startRegistry(t, requireBasicAuth("module-team", "s3cret"))
	data := []byte("private module")
	digest := oci.Digest(data)
	auth, err := oci.BasicCredentials(reg.host, "module-team", "s3cret")
	require.NoError(t, err)
	pusher := newPusher()
	_, err = pusher.PushBlob(t.Context(), reg.repo(moduleRepo), data, "application/x-yaml", auth)
	require.NoError(t, err)
	ref := oci.Ref{Repository: reg.repo(moduleRepo), Digest: digest}

	right, err := oci.CredentialsFromSecretData(map[string][]byte{".dockerconfigjson": dockerConfigJSON(reg.host, "module-team", "s3cret")})
	require.NoError(t, err)
	wrong, err := oci.CredentialsFromSecretData(map[string][]byte{".dockerconfigjson": dockerConfigJSON(reg.host, "module-team", "guess")})
	require.NoError(t, err)
	otherHost, err := oci.CredentialsFromSecretData(map[string][]byte{".dockerconfigjson": dockerConfigJSON("other.example.com", "module-team", "s3cret")})
	require.NoError(t, err)

	for name, keys := range map[string]*oci.Credentials{"wrong password": wrong, "anonymous": nil, "login for another registry": otherHost} {
		t.Run(name, func(t *testing.T) {
			_, err := newFetcher(t, oci.Options{}).Fetch(t.Context(), ref, keys)
			require.ErrorIs(t, err, oci.ErrUnauthorized)
			assert.Equal(t, "RegistryUnauthorized", oci.Reason(err))
		})
	}
	t.Run("right login", func(t *testing.T) {
		got, err := newFetcher(t, oci.Options{}).Fetch(t.Context(), ref, right)
		require.NoError(t, err)
		assert.Equal(t, data, got.Data)
	})
}

func TestFetchFailures(t *testing.T) {
	data := randomBytes(t, 1000)
	digest := oci.Digest(data)
	setup := func(t *testing.T, wrappers ...func(http.Handler) http.Handler) *testRegistry {
		reg := startRegistry(t, wrappers...)
		reg.pushBlob(data)
		return reg
	}
	tests := []struct {
		name     string
		registry func(t *testing.T) *testRegistry
		opts     oci.Options
		digest   string
		wantKind error
		reason   string
		wantMsg  string
	}{
		{name: "missing layer", registry: func(t *testing.T) *testRegistry { return setup(t) },
			digest: oci.Digest([]byte("never pushed")), wantKind: oci.ErrNotFound, reason: "LayerNotFound", wantMsg: "layer not found"},
		{name: "registry down", registry: func(t *testing.T) *testRegistry { r := setup(t); r.srv.Close(); return r },
			digest: digest, wantKind: oci.ErrUnreachable, reason: "RegistryUnreachable", wantMsg: "connection refused"},
		{name: "registry unavailable", registry: func(t *testing.T) *testRegistry { r := setup(t); r.failWith(http.StatusServiceUnavailable); return r },
			digest: digest, wantKind: oci.ErrUnreachable, reason: "RegistryUnreachable", wantMsg: "503"},
		{name: "blob storage unavailable", registry: func(t *testing.T) *testRegistry { return setup(t, failingBlobs(http.StatusBadGateway)) },
			digest: digest, wantKind: oci.ErrUnreachable, reason: "RegistryUnreachable", wantMsg: "502"},
		{name: "registry rejects the request", registry: func(t *testing.T) *testRegistry { return setup(t, failingBlobs(http.StatusBadRequest)) },
			digest: digest, wantKind: oci.ErrInvalid, reason: "InvalidLayer", wantMsg: "400"},
		{name: "registry hangs", registry: func(t *testing.T) *testRegistry { return setup(t, hangingBlobs) },
			opts: oci.Options{Timeout: 200 * time.Millisecond}, digest: digest, wantKind: oci.ErrUnreachable, wantMsg: "deadline exceeded"},
		{name: "digest mismatch", registry: func(t *testing.T) *testRegistry { return setup(t, fakeCorruptingRegistry) },
			digest: digest, wantKind: oci.ErrDigestMismatch, reason: "DigestMismatch", wantMsg: "after 1000 bytes"},
		{name: "oversized with Content-Length", registry: func(t *testing.T) *testRegistry { return setup(t) },
			opts: oci.Options{MaxLayerBytes: 999}, digest: digest, wantKind: oci.ErrTooLarge, reason: "LayerTooLarge", wantMsg: "announces 1000 bytes"},
		{name: "oversized streamed", registry: func(t *testing.T) *testRegistry { return setup(t, fakeChunkedRegistry) },
			opts: oci.Options{MaxLayerBytes: 999}, digest: digest, wantKind: oci.ErrTooLarge, wantMsg: "more than the limit of 999"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := tc.registry(t)
			tc.opts.CacheDir = t.TempDir()
			f := newFetcher(t, tc.opts)
			_, err := f.Fetch(t.Context(), oci.Ref{Repository: reg.repo(moduleRepo), Digest: tc.digest}, nil)
			require.ErrorIs(t, err, tc.wantKind)
			assert.ErrorContains(t, err, tc.wantMsg)
			assert.ErrorContains(t, err, reg.repo(moduleRepo), "the error names the layer")
			if tc.reason != "" {
				assert.Equal(t, tc.reason, oci.Reason(err))
			}
			_, entries := f.CacheSize()
			assert.Zero(t, entries, "nothing is cached after a failure")
		})
	}
}

func TestStreamedLayerWithinTheLimitIsVerified(t *testing.T) {
	reg := startRegistry(t, fakeChunkedRegistry)
	data := randomBytes(t, 1000)
	digest := reg.pushBlob(data)
	got, err := newFetcher(t, oci.Options{MaxLayerBytes: 1000}).Fetch(t.Context(), oci.Ref{Repository: reg.repo(moduleRepo), Digest: digest}, nil)
	require.NoError(t, err)
	assert.Equal(t, data, got.Data)
}

func TestArtifactsThatAreNotSingleLayerAreRejected(t *testing.T) {
	reg := startRegistry(t)
	reg.pushArtifact("images/two", "1", static.NewLayer([]byte("a"), types.OCILayer), static.NewLayer([]byte("b"), types.OCILayer))
	_, err := newFetcher(t, oci.Options{}).Fetch(t.Context(), oci.Ref{Repository: reg.repo("images/two"), Tag: "1"}, nil)
	require.ErrorIs(t, err, oci.ErrInvalid)
	assert.ErrorContains(t, err, "exactly one content layer, this one has 2")

	reg.pushArtifact("images/big", "1", static.NewLayer(randomBytes(t, 2000), types.OCILayer))
	_, err = newFetcher(t, oci.Options{MaxLayerBytes: 1000}).Fetch(t.Context(), oci.Ref{Repository: reg.repo("images/big"), Tag: "1"}, nil)
	require.ErrorIs(t, err, oci.ErrTooLarge, "the size in the manifest is checked before the download")
	assert.Zero(t, reg.count("GET /v2/images/big/blobs/"))
}

func TestInvalidReferences(t *testing.T) {
	f := newFetcher(t, oci.Options{})
	valid := "sha256:" + strings.Repeat("a", 64)
	tests := map[string]oci.Ref{
		"empty":                {},
		"no registry host":     {Repository: "keda/manager", Digest: valid},
		"no digest or tag":     {Repository: "r.example.com/keda"},
		"short digest":         {Repository: "r.example.com/keda", Digest: "sha256:abc"},
		"other algorithm":      {Repository: "r.example.com/keda", Digest: "sha512:" + strings.Repeat("a", 128)},
		"bad tag":              {Repository: "r.example.com/keda", Tag: "no spaces"},
		"uppercase repository": {Repository: "r.example.com/Keda", Digest: valid},
	}
	for name, ref := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := f.Fetch(t.Context(), ref, nil)
			require.ErrorIs(t, err, oci.ErrInvalid)
			assert.Equal(t, "InvalidLayer", oci.Reason(err))
		})
	}
}

func TestCallerThatGivesUpStopsWaiting(t *testing.T) {
	reg := startRegistry(t, hangingBlobs)
	f := newFetcher(t, oci.Options{Timeout: 2 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := f.Fetch(ctx, oci.Ref{Repository: reg.repo(moduleRepo), Digest: oci.Digest([]byte("x"))}, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
