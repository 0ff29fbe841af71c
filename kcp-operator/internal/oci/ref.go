package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
)

// Ref addresses one module layer in a registry.
type Ref struct {
	// Repository is host[:port]/path, e.g.
	// registry.example.com/modules/component-descriptors/kyma-project.io/module/keda.
	Repository string
	// Digest pins the content: the blob's own digest, or, for an Artifact,
	// the digest of the image manifest.
	Digest string
	// Tag names an image whose single content layer is the content. Only
	// used when Digest is empty; implies Artifact.
	Tag string
	// Artifact says that Digest names an image manifest, not a blob. When a
	// digest is not marked as an artifact and the registry has no blob of
	// that digest, Fetch still tries it as a manifest: the Manifest API
	// (ImageSpec) does not record which of the two a digest is.
	Artifact bool
}

// String returns repo@digest or repo:tag.
func (r Ref) String() string {
	if r.Digest != "" {
		return r.Repository + "@" + r.Digest
	}
	return r.Repository + ":" + r.Tag
}

// RefFromLayer addresses a layer found in an OCM descriptor.
func RefFromLayer(l descriptor.Layer) Ref {
	return Ref{Repository: l.Repository, Digest: l.Digest, Tag: l.Tag, Artifact: l.Artifact}
}

// RefFromImageSpec addresses the layer of a Manifest's spec.install.source
// or spec.config: the repository is Repo + "/" + Name; a sha256 Ref is a
// digest (of a blob, or of an artifact's manifest), anything else a tag.
func RefFromImageSpec(spec v1beta2.ImageSpec) (Ref, error) {
	repo := strings.TrimSuffix(spec.Repo, "/")
	if spec.Name != "" {
		repo = strings.TrimSuffix(repo+"/"+strings.TrimPrefix(spec.Name, "/"), "/")
	}
	if repo == "" {
		return Ref{}, &Error{Op: "parsing", Ref: spec.Ref, Kind: ErrInvalid, Err: fmt.Errorf("image spec has neither repo nor name")}
	}
	if spec.Ref == "" {
		return Ref{}, &Error{Op: "parsing", Ref: repo, Kind: ErrInvalid, Err: fmt.Errorf("image spec has no ref (digest or tag)")}
	}
	if strings.HasPrefix(spec.Ref, "sha256:") {
		return Ref{Repository: repo, Digest: spec.Ref}, nil
	}
	return Ref{Repository: repo, Tag: spec.Ref, Artifact: true}, nil
}

// Digest returns the sha256 digest of data in the form registries use.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// target is a Ref checked and parsed.
type target struct {
	ref    Ref
	repo   name.Repository
	digest v1.Hash // zero when addressed by tag
}

func parseTarget(ref Ref, insecure insecureHosts) (target, error) {
	fail := func(err error) (target, error) {
		return target{}, &Error{Op: "parsing", Ref: ref.String(), Kind: ErrInvalid, Err: err}
	}
	repo, err := parseRepository(ref.Repository, insecure)
	if err != nil {
		return fail(err)
	}
	t := target{ref: ref, repo: repo}
	switch {
	case ref.Digest != "":
		h, err := parseDigest(ref.Digest)
		if err != nil {
			return fail(err)
		}
		t.digest = h
	case ref.Tag != "":
		if _, err := name.NewTag(repo.Name()+":"+ref.Tag, name.WeakValidation); err != nil {
			return fail(fmt.Errorf("tag %q: %w", ref.Tag, err))
		}
		t.ref.Artifact = true
	default:
		return fail(fmt.Errorf("neither digest nor tag"))
	}
	return t, nil
}

func parseRepository(repository string, insecure insecureHosts) (name.Repository, error) {
	if repository == "" {
		return name.Repository{}, fmt.Errorf("repository is empty")
	}
	host, _, _ := strings.Cut(repository, "/")
	// Strict: "keda/manager" must not silently mean Docker Hub; module
	// layers always name their registry.
	opts := []name.Option{name.StrictValidation}
	if insecure.allows(host) {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(repository, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("repository %q: %w", repository, err)
	}
	return repo, nil
}

func parseDigest(digest string) (v1.Hash, error) {
	h, err := v1.NewHash(digest)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("digest %q: %w", digest, err)
	}
	if h.Algorithm != "sha256" {
		return v1.Hash{}, fmt.Errorf("digest %q: only sha256 is supported", digest)
	}
	return h, nil
}
