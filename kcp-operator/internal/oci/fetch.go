package oci

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/singleflight"
)

// Defaults of Options.
const (
	DefaultMaxCacheBytes int64 = 1 << 30  // 1 GiB of layers on disk
	DefaultMaxLayerBytes int64 = 64 << 20 // 64 MiB; module layers are KiB to a few MiB
	DefaultTimeout             = time.Minute
	DefaultTagTTL              = time.Minute
	DefaultUserAgent           = "lifecycle-manager"
	// maxManifestBytes bounds image manifests, which are a few KiB.
	maxManifestBytes int64 = 4 << 20
	maxTagEntries          = 4096
)

// Options configure a Fetcher or Pusher. The zero value works: no disk
// cache, the defaults above.
type Options struct {
	// CacheDir holds the disk cache; empty disables it (modulectl).
	CacheDir string
	// MaxCacheBytes bounds the disk cache (default DefaultMaxCacheBytes).
	// A layer larger than the bound is returned but not cached.
	MaxCacheBytes int64
	// MaxLayerBytes bounds one layer (default DefaultMaxLayerBytes).
	MaxLayerBytes int64
	// InsecureRegistries are hosts (host[:port]; a host without a port
	// means every port) reached over plain HTTP. No other host is, loopback
	// and private addresses included: every request that is not HTTPS to
	// one of these is refused (ErrPlainHTTPRefused).
	InsecureRegistries []string
	// Timeout bounds one download or upload, the auth handshake included
	// (default DefaultTimeout).
	Timeout time.Duration
	// TagTTL is how long a tag's digest is remembered; a moved tag is seen
	// after at most this long (default DefaultTagTTL; negative: never remembered).
	TagTTL time.Duration
	// UserAgent of the requests (default DefaultUserAgent).
	UserAgent string
	// Transport is the base HTTP transport (default: a clone of
	// go-containerregistry's remote.DefaultTransport).
	Transport http.RoundTripper
	// Logger logs cache maintenance.
	Logger logr.Logger
	// Metrics, when set, counts fetches and the cache size.
	Metrics *Metrics
}

func (o Options) withDefaults() Options {
	if o.MaxCacheBytes <= 0 {
		o.MaxCacheBytes = DefaultMaxCacheBytes
	}
	if o.MaxLayerBytes <= 0 {
		o.MaxLayerBytes = DefaultMaxLayerBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TagTTL == 0 {
		o.TagTTL = DefaultTagTTL
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Transport == nil {
		o.Transport = remote.DefaultTransport.(*http.Transport).Clone()
	}
	if _, guarded := o.Transport.(plainHTTPGuard); !guarded {
		o.Transport = plainHTTPGuard{next: o.Transport, insecure: o.insecureHosts()}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

func (o Options) insecureHosts() insecureHosts {
	return newInsecureHosts(o.InsecureRegistries)
}

// Blob is the content of a layer.
type Blob struct {
	// Digest of Data.
	Digest string
	// MediaType from the artifact's manifest; empty for a blob fetched by
	// its own digest (the descriptor knows its media type).
	MediaType string
	// Data is shared with the cache and other callers: read it, never
	// modify it.
	Data []byte
}

// Fetcher downloads layers and keeps them in a disk cache by digest. It is
// safe for concurrent use; concurrent fetches of one digest with the same
// login download it once.
type Fetcher struct {
	opts     Options
	insecure insecureHosts
	cache    *diskCache
	flight   singleflight.Group

	tagsMu sync.Mutex
	tags   map[string]tagEntry // repository:tag → manifest digest
}

type tagEntry struct {
	digest  v1.Hash
	expires time.Time
}

// NewFetcher opens the disk cache (when Options.CacheDir is set), dropping
// interrupted writes and evicting down to the size bound.
func NewFetcher(opts Options) (*Fetcher, error) {
	opts = opts.withDefaults()
	f := &Fetcher{opts: opts, insecure: opts.insecureHosts(), tags: map[string]tagEntry{}}
	if opts.CacheDir != "" {
		c, err := openCache(opts.CacheDir, opts.MaxCacheBytes, opts.Logger.WithName("layer-cache"), opts.Metrics)
		if err != nil {
			return nil, err
		}
		f.cache = c
	}
	return f, nil
}

// CacheSize returns the bytes and entries in the disk cache.
func (f *Fetcher) CacheSize() (bytes int64, entries int) {
	return f.cache.size()
}

// Fetch returns the content of ref: the blob of that digest, or the single
// content layer of the image a tag or artifact digest names. The content is
// verified against its digest before it is returned or cached. keys may be
// nil (anonymous). Errors are *Error; see the Err* kinds.
func (f *Fetcher) Fetch(ctx context.Context, ref Ref, keys authn.Keychain) (*Blob, error) {
	t, err := parseTarget(ref, f.insecure)
	if err != nil {
		return nil, err
	}
	s := f.newSession(t, keys)
	switch {
	case t.digest == (v1.Hash{}):
		raw, err := f.manifestByTag(ctx, s, t.ref.Tag)
		if err != nil {
			return nil, err
		}
		return f.contentOf(ctx, s, raw, t.ref.String())
	case t.ref.Artifact:
		raw, err := f.object(ctx, s, kindManifest, t.digest)
		if err != nil {
			return nil, err
		}
		return f.contentOf(ctx, s, raw, t.ref.String())
	default:
		return f.blobOrArtifact(ctx, s, t)
	}
}

// Pin returns ref pinned to a digest, so that callers can key caches by
// content before anything is downloaded: a ref with a digest is returned
// as is (no request); a tag is resolved to its manifest's digest, which is
// remembered for Options.TagTTL.
func (f *Fetcher) Pin(ctx context.Context, ref Ref, keys authn.Keychain) (Ref, error) {
	t, err := parseTarget(ref, f.insecure)
	if err != nil {
		return Ref{}, err
	}
	if t.digest != (v1.Hash{}) {
		return t.ref, nil
	}
	s := f.newSession(t, keys)
	digest, _, err := f.resolveTag(ctx, s, t.ref.Tag)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Repository: t.ref.Repository, Digest: digest.String(), Artifact: true}, nil
}

// blobOrArtifact serves a digest that may be a blob or, failing that, an
// image manifest. The caches are asked before the network so that a
// cached artifact costs no request.
func (f *Fetcher) blobOrArtifact(ctx context.Context, s *session, t target) (*Blob, error) {
	if data, ok := f.cached(kindBlob, t.digest); ok {
		return f.blobOrItsContent(ctx, s, t, data)
	}
	if raw, ok := f.cached(kindManifest, t.digest); ok {
		return f.contentOf(ctx, s, raw, t.ref.String())
	}
	data, err := f.object(ctx, s, kindBlob, t.digest)
	if err == nil {
		return f.blobOrItsContent(ctx, s, t, data)
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	raw, merr := f.object(ctx, s, kindManifest, t.digest)
	if merr != nil {
		if errors.Is(merr, ErrNotFound) {
			return nil, err // neither: report the blob the caller asked for
		}
		return nil, merr
	}
	return f.contentOf(ctx, s, raw, t.ref.String())
}

// blobOrItsContent returns a blob, unless it is an image manifest: registries
// built on the distribution project serve manifests from the blob endpoint
// too, so a digest of an artifact's manifest that is not marked as such
// arrives here as the manifest itself.
func (f *Fetcher) blobOrItsContent(ctx context.Context, s *session, t target, data []byte) (*Blob, error) {
	if looksLikeImageManifest(data) {
		return f.contentOf(ctx, s, data, t.ref.String())
	}
	return &Blob{Digest: t.digest.String(), Data: data}, nil
}

// contentOf fetches the single content layer of an image manifest.
func (f *Fetcher) contentOf(ctx context.Context, s *session, rawManifest []byte, ref string) (*Blob, error) {
	layer, err := contentLayer(rawManifest)
	if err != nil {
		return nil, &Error{Op: "reading artifact", Ref: ref, Kind: ErrInvalid, Err: err}
	}
	if layer.Size > f.opts.MaxLayerBytes {
		return nil, &Error{Op: "reading artifact", Ref: ref, Kind: ErrTooLarge,
			Err: fmt.Errorf("its layer %s has %d bytes, the limit is %d", layer.Digest, layer.Size, f.opts.MaxLayerBytes)}
	}
	data, err := f.object(ctx, s, kindBlob, layer.Digest)
	if err != nil {
		return nil, err
	}
	return &Blob{Digest: layer.Digest.String(), MediaType: string(layer.MediaType), Data: data}, nil
}

func (f *Fetcher) cached(kind objectKind, digest v1.Hash) ([]byte, bool) {
	data, ok := f.cache.get(cacheKey{kind, digest.Hex})
	if ok {
		f.opts.Metrics.fetched(resultHit)
	}
	return data, ok
}

// object returns a verified blob or manifest from the cache, else
// downloads it once for all concurrent callers with the same login.
func (f *Fetcher) object(ctx context.Context, s *session, kind objectKind, digest v1.Hash) ([]byte, error) {
	if data, ok := f.cached(kind, digest); ok {
		return data, nil
	}
	id, err := s.identity(ctx)
	if err != nil {
		return nil, err
	}
	key := string(kind) + " " + s.repo.Name() + "@" + digest.String() + " " + id
	got, err := f.shared(ctx, key, func(ctx context.Context) (fetched, error) {
		// A flight that just ended may have cached it.
		if data, ok := f.cache.get(cacheKey{kind, digest.Hex}); ok {
			return fetched{data: data, digest: digest}, nil
		}
		got, err := f.download(ctx, s, kind, digest.String(), digest)
		if err != nil {
			return fetched{}, err
		}
		f.cache.put(cacheKey{kind, digest.Hex}, got.data)
		return got, nil
	})
	if err != nil {
		return nil, err
	}
	return got.data, nil
}

// manifestByTag returns the manifest a tag names.
func (f *Fetcher) manifestByTag(ctx context.Context, s *session, tag string) ([]byte, error) {
	digest, raw, err := f.resolveTag(ctx, s, tag)
	if err != nil {
		return nil, err
	}
	if raw != nil {
		return raw, nil
	}
	return f.object(ctx, s, kindManifest, digest)
}

// resolveTag returns the digest of the manifest a tag names, and the
// manifest when it had to be downloaded.
func (f *Fetcher) resolveTag(ctx context.Context, s *session, tag string) (v1.Hash, []byte, error) {
	key := s.repo.Name() + ":" + tag
	if d, ok := f.rememberedTag(key); ok {
		return d, nil, nil
	}
	id, err := s.identity(ctx)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	got, err := f.shared(ctx, "tag "+key+" "+id, func(ctx context.Context) (fetched, error) {
		got, err := f.download(ctx, s, kindManifest, tag, v1.Hash{})
		if err != nil {
			return fetched{}, err
		}
		f.cache.put(cacheKey{kindManifest, got.digest.Hex}, got.data)
		f.rememberTag(key, got.digest)
		return got, nil
	})
	if err != nil {
		return v1.Hash{}, nil, err
	}
	return got.digest, got.data, nil
}

func (f *Fetcher) rememberedTag(key string) (v1.Hash, bool) {
	f.tagsMu.Lock()
	defer f.tagsMu.Unlock()
	e, ok := f.tags[key]
	if !ok || time.Now().After(e.expires) {
		return v1.Hash{}, false
	}
	return e.digest, true
}

func (f *Fetcher) rememberTag(key string, digest v1.Hash) {
	if f.opts.TagTTL < 0 {
		return
	}
	f.tagsMu.Lock()
	defer f.tagsMu.Unlock()
	if len(f.tags) >= maxTagEntries {
		clear(f.tags) // crude, but tags are rare and re-resolving is cheap
	}
	f.tags[key] = tagEntry{digest: digest, expires: time.Now().Add(f.opts.TagTTL)}
}

type fetched struct {
	data   []byte
	digest v1.Hash
}

// shared runs fn once for all concurrent callers with the same key. fn
// runs on a context detached from the caller's (bounded by Options.Timeout)
// so that one caller giving up does not fail the others; a caller whose
// context ends stops waiting.
func (f *Fetcher) shared(ctx context.Context, key string, fn func(context.Context) (fetched, error)) (fetched, error) {
	ch := f.flight.DoChan(key, func() (any, error) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.opts.Timeout)
		defer cancel()
		return fn(dctx)
	})
	select {
	case <-ctx.Done():
		return fetched{}, fmt.Errorf("waiting for %s: %w", key, ctx.Err())
	case r := <-ch:
		if r.Err != nil {
			f.opts.Metrics.fetched(resultError)
			return fetched{}, r.Err
		}
		f.opts.Metrics.fetched(resultMiss)
		return r.Val.(fetched), nil
	}
}
