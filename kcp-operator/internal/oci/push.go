package oci

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Descriptor says what was stored: media type, digest and size.
type Descriptor struct {
	MediaType string
	Digest    string
	Size      int64
}

// Pusher uploads module content for modulectl. It is safe for concurrent use.
type Pusher struct {
	opts     Options
	insecure insecureHosts
}

// NewPusher returns a Pusher. Of the Options it uses InsecureRegistries,
// Timeout (per call), UserAgent and Transport.
func NewPusher(opts Options) *Pusher {
	opts = opts.withDefaults()
	return &Pusher{opts: opts, insecure: opts.insecureHosts()}
}

// PushBlob uploads data as a blob of repository; registries skip blobs they
// already have. Nothing references the blob until a manifest does, and
// registries may garbage-collect unreferenced blobs: use it for layers that
// PushComponentVersion or PushArtifact then reference.
func (p *Pusher) PushBlob(ctx context.Context, repository string, data []byte, mediaType string, keys authn.Keychain) (Descriptor, error) {
	repo, err := parseRepository(repository, p.insecure)
	if err != nil {
		return Descriptor{}, &Error{Op: "pushing blob to", Ref: repository, Kind: ErrInvalid, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	return p.pushBlob(ctx, repo, data, mediaType, keys)
}

func (p *Pusher) pushBlob(ctx context.Context, repo name.Repository, data []byte, mediaType string, keys authn.Keychain) (Descriptor, error) {
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	d := Descriptor{MediaType: mediaType, Digest: Digest(data), Size: int64(len(data))}
	if err := remote.WriteLayer(repo, static.NewLayer(data, types.MediaType(mediaType)), p.remoteOptions(ctx, keys)...); err != nil {
		return Descriptor{}, &Error{Op: "pushing blob", Ref: repo.Name() + "@" + d.Digest, Kind: kindOfPushError(err), Err: err}
	}
	return d, nil
}

// PushArtifact uploads data as the single layer of an image tagged tag, the
// form an ociArtifact access (and Ref{Tag: …}) points to. configMediaType
// may be empty (an empty JSON config is used). It returns the manifest.
func (p *Pusher) PushArtifact(ctx context.Context, repository, tag string, data []byte, mediaType, configMediaType string, keys authn.Keychain) (Descriptor, error) {
	repo, err := parseRepository(repository, p.insecure)
	if err != nil {
		return Descriptor{}, &Error{Op: "pushing artifact to", Ref: repository, Kind: ErrInvalid, Err: err}
	}
	if configMediaType == "" {
		configMediaType = "application/vnd.oci.empty.v1+json"
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	layer, err := p.pushBlob(ctx, repo, data, mediaType, keys)
	if err != nil {
		return Descriptor{}, err
	}
	config, err := p.pushBlob(ctx, repo, []byte("{}"), configMediaType, keys)
	if err != nil {
		return Descriptor{}, err
	}
	return p.putManifest(ctx, repo, tag, config, []Descriptor{layer}, keys)
}

// putManifest uploads an OCI image manifest of blobs already pushed.
func (p *Pusher) putManifest(ctx context.Context, repo name.Repository, tag string, config Descriptor, layers []Descriptor, keys authn.Keychain) (Descriptor, error) {
	ref := repo.Name() + ":" + tag
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: ociDescriptor(config)}
	for _, l := range layers {
		m.Layers = append(m.Layers, ociDescriptor(l))
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return Descriptor{}, &Error{Op: "pushing manifest", Ref: ref, Kind: ErrInvalid, Err: err}
	}
	if _, err := name.NewTag(ref, name.StrictValidation); err != nil {
		return Descriptor{}, &Error{Op: "pushing manifest", Ref: ref, Kind: ErrInvalid, Err: err}
	}
	// repo.Tag keeps the registry's plain-HTTP setting.
	if err := remote.Put(repo.Tag(tag), rawManifest(raw), p.remoteOptions(ctx, keys)...); err != nil {
		return Descriptor{}, &Error{Op: "pushing manifest", Ref: ref, Kind: kindOfPushError(err), Err: err}
	}
	return Descriptor{MediaType: string(types.OCIManifestSchema1), Digest: Digest(raw), Size: int64(len(raw))}, nil
}

func (p *Pusher) remoteOptions(ctx context.Context, keys authn.Keychain) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(p.opts.Transport),
		remote.WithUserAgent(p.opts.UserAgent),
		// One quick retry for a network flake; a CLI user retries the rest.
		remote.WithRetryBackoff(remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 2}),
	}
	if keys != nil {
		opts = append(opts, remote.WithAuthFromKeychain(keys))
	}
	return opts
}

func ociDescriptor(d Descriptor) v1.Descriptor {
	h, _ := v1.NewHash(d.Digest) // computed by Digest, always valid
	return v1.Descriptor{MediaType: types.MediaType(d.MediaType), Digest: h, Size: d.Size}
}

// rawManifest is a manifest to upload as is.
type rawManifest []byte

func (m rawManifest) RawManifest() ([]byte, error) { return m, nil }

func (m rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// kindOfPushError classifies errors of go-containerregistry's remote package.
func kindOfPushError(err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return kindOfStatus(terr.StatusCode)
	}
	var nerr net.Error
	var uerr *url.Error
	if errors.As(err, &nerr) || errors.As(err, &uerr) || errors.Is(err, context.DeadlineExceeded) {
		return ErrUnreachable
	}
	return ErrInvalid
}
