package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// helmProvenance is the media type of a Helm chart's signature layer, which
// sits next to the chart layer and is not content.
const helmProvenance = "application/vnd.cncf.helm.chart.provenance.v1.prov"

// manifestAccept lists the manifest media types asked for, so that a
// registry does not convert an OCI manifest to an older schema.
var manifestAccept = strings.Join([]string{
	string(types.OCIManifestSchema1), string(types.DockerManifestSchema2),
	string(types.OCIImageIndex), string(types.DockerManifestList),
}, ", ")

// session is the requests of one Fetch against one repository: the
// login is resolved and the registry's auth handshake done once, lazily,
// so that a cache hit costs no request at all.
type session struct {
	f    *Fetcher
	ref  string // what the caller asked for, for errors
	repo name.Repository
	keys authn.Keychain

	mu   sync.Mutex
	auth authn.Authenticator
	id   string
	rt   http.RoundTripper
}

func (f *Fetcher) newSession(t target, keys authn.Keychain) *session {
	return &session{f: f, ref: t.ref.String(), repo: t.repo, keys: keys}
}

// identity resolves the login for the repository.
func (s *session) identity(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auth != nil {
		return s.id, nil
	}
	auth := authn.Anonymous
	if s.keys != nil {
		var err error
		if auth, err = authn.Resolve(ctx, s.keys, s.repo); err != nil {
			return "", &Error{Op: "resolving credentials for", Ref: s.ref, Kind: ErrUnauthorized, Err: err}
		}
	}
	id, err := authID(auth)
	if err != nil {
		return "", &Error{Op: "resolving credentials for", Ref: s.ref, Kind: ErrUnauthorized, Err: err}
	}
	s.auth, s.id = auth, id
	return id, nil
}

// roundTripper does the auth handshake (a ping of /v2/, then basic auth or
// a bearer token for pull access to the repository).
func (s *session) roundTripper(ctx context.Context) (http.RoundTripper, error) {
	if _, err := s.identity(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt != nil {
		return s.rt, nil
	}
	base := transport.NewUserAgent(s.f.opts.Transport, s.f.opts.UserAgent)
	rt, err := transport.NewWithContext(ctx, s.repo.Registry, s.auth, base, []string{s.repo.Scope(transport.PullScope)})
	if err != nil {
		return nil, &Error{Op: "fetching", Ref: s.ref, Kind: kindOfTransportError(err),
			Err: fmt.Errorf("connecting to %s: %w", s.repo.RegistryStr(), err)}
	}
	s.rt = rt
	return rt, nil
}

// download GETs a blob or manifest by digest or tag (reference), reading
// at most the size limit. With a non-zero want the content must hash to
// it; the digest of what was read is returned either way.
func (f *Fetcher) download(ctx context.Context, s *session, kind objectKind, reference string, want v1.Hash) (fetched, error) {
	sep := "@"
	if want == (v1.Hash{}) {
		sep = ":"
	}
	fail := func(k error, err error) (fetched, error) {
		return fetched{}, &Error{Op: "fetching " + strings.TrimSuffix(string(kind), "s"), Ref: s.repo.Name() + sep + reference, Kind: k, Err: err}
	}
	rt, err := s.roundTripper(ctx)
	if err != nil {
		return fetched{}, err
	}
	// Not s.repo.Scheme(): go-containerregistry answers http for loopback
	// and private addresses that are not listed as insecure.
	u := url.URL{Scheme: f.insecure.scheme(s.repo.RegistryStr()), Host: s.repo.RegistryStr(), Path: fmt.Sprintf("/v2/%s/%s/%s", s.repo.RepositoryStr(), kind, reference)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(ErrInvalid, err)
	}
	limit := f.opts.MaxLayerBytes
	if kind == kindManifest {
		req.Header.Set("Accept", manifestAccept)
		limit = maxManifestBytes
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return fail(ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		return fail(kindOfStatus(resp.StatusCode), err)
	}
	if resp.ContentLength > limit {
		return fail(ErrTooLarge, fmt.Errorf("the registry announces %d bytes, the limit is %d", resp.ContentLength, limit))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fail(ErrUnreachable, fmt.Errorf("reading the response: %w", err))
	}
	if int64(len(data)) > limit {
		return fail(ErrTooLarge, fmt.Errorf("more than the limit of %d bytes", limit))
	}
	got, err := v1.NewHash(Digest(data))
	if err != nil {
		return fail(ErrInvalid, err)
	}
	if want != (v1.Hash{}) && got != want {
		return fail(ErrDigestMismatch, fmt.Errorf("got %s after %d bytes", got, len(data)))
	}
	return fetched{data: data, digest: got}, nil
}

// looksLikeImageManifest tells an image manifest from layer content: a JSON
// object with schemaVersion 2, a config descriptor and a list of layers.
// Kubernetes manifests in JSON have none of these.
func looksLikeImageManifest(data []byte) bool {
	if int64(len(data)) > maxManifestBytes || !bytes.Contains(data, []byte(`"schemaVersion"`)) {
		return false
	}
	var m struct {
		SchemaVersion int `json:"schemaVersion"`
		Config        *struct {
			Digest string `json:"digest"`
		} `json:"config"`
		Layers []json.RawMessage `json:"layers"`
	}
	return json.Unmarshal(data, &m) == nil && m.SchemaVersion == 2 && m.Config != nil && m.Config.Digest != "" && m.Layers != nil
}

// contentLayer picks the layer of a single-layer artifact (a Helm chart's
// provenance layer does not count).
func contentLayer(raw []byte) (v1.Descriptor, error) {
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("not an image manifest: %w", err)
	}
	if m.MediaType.IsIndex() {
		return v1.Descriptor{}, errors.New("an image index, not a single-layer artifact")
	}
	var content []v1.Descriptor
	for _, l := range m.Layers {
		if l.MediaType != helmProvenance {
			content = append(content, l)
		}
	}
	if len(content) != 1 {
		kinds := make([]string, len(content))
		for i, l := range content {
			kinds[i] = string(l.MediaType)
		}
		return v1.Descriptor{}, fmt.Errorf("an artifact must have exactly one content layer, this one has %d %v", len(content), kinds)
	}
	return content[0], nil
}
