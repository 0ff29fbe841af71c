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

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
)

// ComponentVersion is a component version read from its repository.
type ComponentVersion struct {
	// Descriptor is component-descriptor.yaml as stored (YAML or JSON).
	Descriptor []byte
	// DescriptorDigest is the digest of the layer that holds it: the
	// identity of the descriptor, whatever tag names it.
	DescriptorDigest string
	// ManifestDigest is the digest of the OCI manifest the tag names.
	ManifestDigest string
}

// ComponentDescriptor reads the descriptor of a component version from its
// repository (see ComponentRepository): what PushComponentVersion wrote,
// or what OCM tooling wrote with the current or the older Gardener media types.
func (f *Fetcher) ComponentDescriptor(ctx context.Context, repository, version string, keys authn.Keychain) ([]byte, error) {
	cv, err := f.ComponentVersion(ctx, repository, version, keys)
	if err != nil {
		return nil, err
	}
	return cv.Descriptor, nil
}

// ComponentVersion reads a component version: the tag (the version, see
// VersionTag) is resolved to its manifest, whose config names the
// descriptor layer (componentDescriptorLayer, as OCM writes it; layer 0
// when the config does not say). Manifest and layer are fetched by digest
// through the cache, so a version read before costs at most the tag's
// resolution. A missing tag is ErrNotFound (Tags tells whether the
// repository is missing too).
func (f *Fetcher) ComponentVersion(ctx context.Context, repository, version string, keys authn.Keychain) (*ComponentVersion, error) {
	t, err := parseTarget(Ref{Repository: repository, Tag: VersionTag(version)}, f.insecure)
	if err != nil {
		return nil, err
	}
	s := f.newSession(t, keys)
	digest, raw, err := f.resolveTag(ctx, s, t.ref.Tag)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		if raw, err = f.object(ctx, s, kindManifest, digest); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*ComponentVersion, error) {
		return nil, &Error{Op: "reading component version", Ref: t.ref.String(), Kind: ErrInvalid, Err: err}
	}
	layer, err := f.descriptorLayer(ctx, s, raw)
	if err != nil {
		return fail(err)
	}
	data, err := f.object(ctx, s, kindBlob, layer.Digest)
	if err != nil {
		return nil, err
	}
	cv := &ComponentVersion{DescriptorDigest: layer.Digest.String(), ManifestDigest: digest.String()}
	switch string(layer.MediaType) {
	case ComponentDescriptorMediaType, legacyDescriptorTar:
		if cv.Descriptor, err = fileFromTar(data, ComponentDescriptorFile, descriptor.MaxSize); err != nil {
			return fail(err)
		}
	case legacyDescriptorJSON:
		cv.Descriptor = data
	default:
		return fail(fmt.Errorf("the descriptor layer has media type %q, not a component descriptor", layer.MediaType))
	}
	return cv, nil
}

// descriptorLayer finds the layer with the descriptor: the one the config's
// componentDescriptorLayer names, else layer 0.
func (f *Fetcher) descriptorLayer(ctx context.Context, s *session, rawManifest []byte) (v1.Descriptor, error) {
	m, err := v1.ParseManifest(bytes.NewReader(rawManifest))
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("not an image manifest: %w", err)
	}
	if len(m.Layers) == 0 {
		return v1.Descriptor{}, errors.New("the manifest has no layers")
	}
	if m.Config.MediaType != ComponentConfigMediaType || m.Config.Size > maxManifestBytes {
		return m.Layers[0], nil
	}
	config, err := f.object(ctx, s, kindBlob, m.Config.Digest)
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("reading the component config: %w", err)
	}
	var c struct {
		Layer *v1.Descriptor `json:"componentDescriptorLayer"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return v1.Descriptor{}, fmt.Errorf("the component config is not JSON: %w", err)
	}
	if c.Layer == nil {
		return m.Layers[0], nil
	}
	for _, l := range m.Layers {
		if l.Digest == c.Layer.Digest {
			return l, nil
		}
	}
	return v1.Descriptor{}, fmt.Errorf("the component config names the descriptor layer %s, which the manifest does not list", c.Layer.Digest)
}

// Tags lists the tags of a repository, as the registry returns them (the
// first page). A repository the registry does not know is ErrNotFound.
func (f *Fetcher) Tags(ctx context.Context, repository string, keys authn.Keychain) ([]string, error) {
	repo, err := parseRepository(repository, f.insecure)
	if err != nil {
		return nil, &Error{Op: "listing tags of", Ref: repository, Kind: ErrInvalid, Err: err}
	}
	s := &session{f: f, ref: repository, repo: repo, keys: keys}
	rt, err := s.roundTripper(ctx)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: f.insecure.scheme(repo.RegistryStr()), Host: repo.RegistryStr(), Path: fmt.Sprintf("/v2/%s/tags/list", repo.RepositoryStr())}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Op: "listing tags of", Ref: repository, Kind: ErrInvalid, Err: err}
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return nil, &Error{Op: "listing tags of", Ref: repository, Kind: ErrUnreachable, Err: err}
	}
	defer resp.Body.Close()
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		return nil, &Error{Op: "listing tags of", Ref: repository, Kind: kindOfStatus(resp.StatusCode), Err: err}
	}
	var list struct {
		Tags []string `json:"tags"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxManifestBytes)).Decode(&list); err != nil {
		return nil, &Error{Op: "listing tags of", Ref: repository, Kind: ErrInvalid, Err: err}
	}
	return list.Tags, nil
}
