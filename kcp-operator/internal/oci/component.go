package oci

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
)

// OCM's mapping of a component version to an OCI repository (ocm-spec,
// appendix A "OCI Registries"): the repository is
// <baseUrl>/component-descriptors/<component name>; the version is a tag
// ("+" written as ".build-"); the tag names an OCI image manifest whose
// config (ComponentConfigMediaType) points at layer 0, a tar holding
// component-descriptor.yaml; the local blobs are the further layers, and a
// localBlob's localReference is the layer digest.
const (
	ComponentConfigMediaType     = "application/vnd.ocm.software.component.config.v1+json"
	ComponentDescriptorMediaType = "application/vnd.ocm.software.component-descriptor.v2+yaml+tar"
	ComponentDescriptorFile      = "component-descriptor.yaml"

	// Media types of older (Gardener) tooling, still read.
	legacyDescriptorTar  = "application/vnd.gardener.cloud.cnudie.component-descriptor.v2+yaml+tar"
	legacyDescriptorJSON = "application/vnd.gardener.cloud.cnudie.component-descriptor.v2+json"
)

// ComponentRepository returns the repository of an OCM component under an
// OCI repository context's base URL (baseUrl plus subPath).
func ComponentRepository(baseURL, component string) string {
	return strings.TrimSuffix(baseURL, "/") + "/component-descriptors/" + component
}

// VersionTag maps a component version to its OCI tag: OCI tags cannot hold
// the "+" of semver build metadata.
func VersionTag(version string) string {
	return strings.Replace(version, "+", ".build-", 1)
}

// LocalBlob is a resource stored with the component version.
type LocalBlob struct {
	MediaType string
	Data      []byte
}

// PushedComponentVersion says where a component version went.
type PushedComponentVersion struct {
	// Repository is <baseUrl>/component-descriptors/<name>.
	Repository string
	// Tag is the version as an OCI tag.
	Tag string
	// Manifest is the image manifest the tag names.
	Manifest Descriptor
	// DescriptorLayer is layer 0, the tar with the descriptor.
	DescriptorLayer Descriptor
	// Blobs are the local blobs, in the order given.
	Blobs []Descriptor
}

// PushComponentVersion publishes a component version: the descriptor
// (YAML or JSON, schema v2) and its local blobs. The repository comes from
// the descriptor's OCI repository context, so that descriptor.LayerOf
// finds every blob where it was pushed. Every localBlob resource without a
// globalAccess must have its localReference among the blobs (compute it
// with Digest before writing the descriptor), and every blob must be
// referenced. Pushing the same content again is a no-op for the registry.
func (p *Pusher) PushComponentVersion(ctx context.Context, descriptorDoc []byte, blobs []LocalBlob, keys authn.Keychain) (*PushedComponentVersion, error) {
	d, err := descriptor.Parse(descriptorDoc)
	if err != nil {
		return nil, &Error{Op: "pushing component version", Ref: "(descriptor)", Kind: ErrInvalid, Err: err}
	}
	ref := d.Name + ":" + d.Version
	repository, err := d.OCIRepository()
	if err == nil {
		err = checkLocalBlobs(d, blobs)
	}
	if err != nil {
		return nil, &Error{Op: "pushing component version", Ref: ref, Kind: ErrInvalid, Err: err}
	}
	repo, err := parseRepository(repository, p.insecure)
	if err != nil {
		return nil, &Error{Op: "pushing component version", Ref: ref, Kind: ErrInvalid, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()

	out := &PushedComponentVersion{Repository: repository, Tag: VersionTag(d.Version)}
	for _, b := range blobs {
		pushed, err := p.pushBlob(ctx, repo, b.Data, b.MediaType, keys)
		if err != nil {
			return nil, err
		}
		out.Blobs = append(out.Blobs, pushed)
	}
	if out.DescriptorLayer, err = p.pushBlob(ctx, repo, descriptorTar(descriptorDoc), ComponentDescriptorMediaType, keys); err != nil {
		return nil, err
	}
	config, err := json.Marshal(componentConfig{DescriptorLayer: ociDescriptor(out.DescriptorLayer)})
	if err != nil {
		return nil, &Error{Op: "pushing component version", Ref: ref, Kind: ErrInvalid, Err: err}
	}
	configDesc, err := p.pushBlob(ctx, repo, config, ComponentConfigMediaType, keys)
	if err != nil {
		return nil, err
	}
	if out.Manifest, err = p.putManifest(ctx, repo, out.Tag, configDesc, append([]Descriptor{out.DescriptorLayer}, out.Blobs...), keys); err != nil {
		return nil, err
	}
	return out, nil
}

type componentConfig struct {
	DescriptorLayer v1.Descriptor `json:"componentDescriptorLayer"`
}

func checkLocalBlobs(d *descriptor.Descriptor, blobs []LocalBlob) error {
	have := make(map[string]int, len(blobs))
	for i, b := range blobs {
		have[Digest(b.Data)] = i
	}
	used := make(map[int]bool, len(blobs))
	for _, r := range d.Resources {
		if r.Access.Kind() != descriptor.AccessLocalBlob {
			continue
		}
		i, ok := have[r.Access.LocalReference]
		if !ok && r.Access.GlobalAccess == nil {
			return fmt.Errorf("resource %q: no blob given has its localReference %s", r.Name, r.Access.LocalReference)
		}
		if ok {
			used[i] = true
		}
	}
	for i, b := range blobs {
		if !used[i] {
			return fmt.Errorf("blob %d (%s, %s) is not the localReference of any resource", i, b.MediaType, Digest(b.Data))
		}
	}
	return nil
}

// descriptorTar packs the descriptor reproducibly: same descriptor, same digest.
func descriptorTar(doc []byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// Writing to a bytes.Buffer cannot fail.
	_ = tw.WriteHeader(&tar.Header{
		Name: ComponentDescriptorFile, Mode: 0o644, Size: int64(len(doc)),
		Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR,
	})
	_, _ = tw.Write(doc)
	_ = tw.Close()
	return buf.Bytes()
}

func fileFromTar(data []byte, file string, limit int64) ([]byte, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the descriptor layer has no %s", file)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the descriptor layer: %w", err)
		}
		if h.Name != file {
			continue
		}
		if h.Size > limit {
			return nil, fmt.Errorf("%s has %d bytes, more than the limit of %d", file, h.Size, limit)
		}
		return io.ReadAll(io.LimitReader(tr, limit))
	}
}
