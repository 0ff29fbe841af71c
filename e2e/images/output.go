package images

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// refNameAnnotation names an image in an OCI layout's index, as
// containerd and skopeo read it.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes the images into an OCI image layout at dir, each
// annotated with its reference (name:tag); the layout's index is replaced.
func WriteLayout(dir string, refs map[string]v1.Image) error {
	p, err := layout.Write(dir, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return fmt.Errorf("creating the OCI layout %s: %w", dir, err)
	}
	for ref, img := range refs {
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: ref})); err != nil {
			return fmt.Errorf("writing %s into %s: %w", ref, dir, err)
		}
	}
	return nil
}

// WriteArchive writes the images into one tarball that `docker load` and
// `kind load image-archive` read.
func WriteArchive(path string, refs map[string]v1.Image) error {
	tagged := make(map[name.Reference]v1.Image, len(refs))
	for ref, img := range refs {
		tag, err := name.NewTag(ref)
		if err != nil {
			return fmt.Errorf("image reference %q: %w", ref, err)
		}
		tagged[tag] = img
	}
	if err := tarball.MultiRefWriteToFile(path, tagged); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Push uploads img to ref; insecure allows plain HTTP to the registry.
func Push(ctx context.Context, ref string, img v1.Image, insecure bool) error {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}
