package descriptor

import (
	"fmt"
	"regexp"
	"strings"
)

// digestPattern is the only digest form registries and this operator agree on.
var digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// Layer says where a resource's content lives in an OCI registry.
type Layer struct {
	// Repository is registry host and path, e.g. registry.example.com/modules/component-descriptors/kyma-project.io/module/keda.
	Repository string
	// Digest of the blob; for an artifact, of its manifest when pinned.
	Digest string
	// Tag of an artifact referenced by tag.
	Tag string
	// Artifact is true when Repository@Digest (or :Tag) is an image whose
	// layers hold the content, false when it is the blob itself.
	Artifact  bool
	MediaType string
}

// Ref returns the layer as a reference string: repo@digest or repo:tag.
func (l Layer) Ref() string {
	if l.Digest != "" {
		return l.Repository + "@" + l.Digest
	}
	return l.Repository + ":" + l.Tag
}

// LayerOf returns where the named resource's content lives.
func (d *Descriptor) LayerOf(name string) (Layer, error) {
	r, ok := d.Resource(name)
	if !ok {
		return Layer{}, fmt.Errorf("component %s:%s has no resource %q", d.Name, d.Version, name)
	}
	l, err := d.layerOf(r.Access)
	if err != nil {
		return Layer{}, fmt.Errorf("resource %q of %s:%s: %w", name, d.Name, d.Version, err)
	}
	return l, nil
}

func (d *Descriptor) layerOf(a Access) (Layer, error) {
	switch a.Kind() {
	case AccessLocalBlob:
		if a.GlobalAccess != nil {
			return d.layerOf(*a.GlobalAccess)
		}
		if !digestPattern.MatchString(a.LocalReference) {
			return Layer{}, fmt.Errorf("localReference %q is not a sha256 digest", a.LocalReference)
		}
		repo, err := d.OCIRepository()
		if err != nil {
			return Layer{}, err
		}
		return Layer{Repository: repo, Digest: a.LocalReference, MediaType: a.MediaType}, nil
	case AccessOCIBlob:
		if !digestPattern.MatchString(a.Digest) {
			return Layer{}, fmt.Errorf("digest %q is not a sha256 digest", a.Digest)
		}
		return Layer{Repository: a.Ref, Digest: a.Digest, MediaType: a.MediaType}, nil
	case AccessOCIArtifact:
		return artifactLayer(a.ImageReference)
	default:
		return Layer{}, fmt.Errorf("access type %q is not supported (want %s, %s or %s)",
			a.Type, AccessLocalBlob, AccessOCIBlob, AccessOCIArtifact)
	}
}

func artifactLayer(ref string) (Layer, error) {
	l := Layer{Artifact: true}
	if repo, digest, ok := strings.Cut(ref, "@"); ok {
		if !digestPattern.MatchString(digest) {
			return Layer{}, fmt.Errorf("image reference %q: %q is not a sha256 digest", ref, digest)
		}
		l.Repository, l.Digest = repo, digest
		return l, nil
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		return Layer{}, fmt.Errorf("image reference %q has neither a tag nor a digest", ref)
	}
	l.Repository, l.Tag = ref[:colon], ref[colon+1:]
	return l, nil
}
