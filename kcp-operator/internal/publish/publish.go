package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// Result is a module version published (or, on a dry run, checked and built).
type Result struct {
	Module    string `json:"module"`
	Version   string `json:"version"`
	Component string `json:"component"`
	// Repository is <registry>/component-descriptors/<component>.
	Repository string `json:"repository"`
	// Tag is the version as an OCI tag ("+" written as ".build-").
	Tag string `json:"tag"`
	// ManifestDigest is the digest of the component version's OCI
	// manifest; empty on a dry run.
	ManifestDigest string      `json:"manifestDigest,omitempty"`
	Layers         []LayerInfo `json:"layers"`
	// Objects is how many objects the module installs (the default CR aside).
	Objects  int              `json:"objects"`
	Manager  *v1beta2.Manager `json:"manager,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
	DryRun   bool             `json:"dryRun,omitempty"`
	// Unchanged is true when the registry already had this version with
	// the same descriptor: publishing again changed nothing.
	Unchanged bool `json:"unchanged,omitempty"`
	// Signature is the descriptor's signature; nil when unsigned.
	Signature *SignatureInfo `json:"signature,omitempty"`

	// Descriptor is the component descriptor as pushed (YAML).
	Descriptor []byte `json:"-"`
	// Template is the ModuleTemplate of this version.
	Template *v1beta2.ModuleTemplate `json:"-"`
	// ReleaseMeta assigns the version to channels (or makes it mandatory),
	// merged into Request.ReleaseMeta; nil without channels and mandatory.
	ReleaseMeta *v1beta2.ModuleReleaseMeta `json:"-"`
}

// LayerInfo describes a layer of the module.
type LayerInfo struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
	Source    string `json:"source,omitempty"`
}

// prepared is a module checked and built, ready to push.
type prepared struct {
	layers []Layer // the install layer first, then the config
	result *Result
}

// Publish checks the module, pushes its layers and component descriptor to
// the registry, and returns the ModuleTemplate and ModuleReleaseMeta that
// make it available. Everything is checked before anything is pushed:
// names, version, manifests or chart (rendered as the operator renders
// them), the default CR against the module's CRDs, the release meta file
// to merge into, the descriptor, and whether the registry already has the
// version with other content (refused unless Request.Overwrite).
// Publishing the same module again pushes the same digests.
func Publish(ctx context.Context, req Request, access Access) (*Result, error) {
	p, err := prepare(ctx, &req, access)
	if err != nil {
		return nil, err
	}
	if req.DryRun {
		access.printf("dry run    nothing pushed to %s", p.result.Repository)
		return p.result, nil
	}
	if err := push(ctx, &req, access, p); err != nil {
		return nil, err
	}
	return p.result, nil
}

func prepare(ctx context.Context, req *Request, access Access) (*prepared, error) {
	if err := req.normalize(); err != nil {
		return nil, err
	}
	in, err := readInputs(req)
	if err != nil {
		return nil, err
	}
	r, err := renderModule(ctx, renderInput{module: req.Name, namespace: req.RuntimeNamespace, install: in.layers[0], config: in.config()})
	if err != nil {
		return nil, invalid("%s %s: %w", flagOf(in.layers[0]), in.layers[0].Source, err)
	}
	if in.defaultCR != nil {
		if err := checkDefaultCR(in.defaultCR, r.kinds); err != nil {
			return nil, invalid("--default-cr %s (%s): %w", req.DefaultCR, describe(in.defaultCR), err)
		}
	}
	manager, warning, err := findManager(r.objects, req.Manager)
	if err != nil {
		return nil, invalid("%w", err)
	}
	warnings := r.warnings
	if warning != "" {
		warnings = append(warnings, warning)
	}
	result, err := build(req, in, manager)
	if err != nil {
		return nil, err
	}
	result.Objects, result.Warnings = len(r.objects), warnings
	access.printf("checked    %s %s: %d objects from %s%s", req.Name, req.Version, len(r.objects), in.layers[0].Source, summary(in.defaultCR, manager))
	if s := result.Signature; s != nil {
		access.printf("signed     %q by %s, descriptor digest %s", s.Name, s.Signer, s.Digest)
	}
	access.warn(warnings...)
	return &prepared{layers: in.layers, result: result}, nil
}

// inputs are the files of a request, read and checked on their own.
type inputs struct {
	layers      []Layer
	defaultCR   *unstructured.Unstructured
	releaseMeta *v1beta2.ModuleReleaseMeta
}

func (in *inputs) config() *Layer {
	if len(in.layers) > 1 {
		return &in.layers[1]
	}
	return nil
}

func readInputs(req *Request) (*inputs, error) {
	in := &inputs{}
	var install Layer
	var err error
	if req.Manifests != "" {
		install, err = readManifests(req.Manifests)
	} else {
		install, err = readChart(req.Chart)
	}
	if err != nil {
		return nil, err
	}
	in.layers = []Layer{install}
	if req.Config != "" {
		config, err := readConfig(req.Config)
		if err != nil {
			return nil, err
		}
		in.layers = append(in.layers, config)
	}
	if req.DefaultCR != "" {
		if in.defaultCR, err = readDefaultCR(req.DefaultCR); err != nil {
			return nil, err
		}
	}
	if req.ReleaseMeta != "" {
		if in.releaseMeta, err = ReadReleaseMeta(req.ReleaseMeta); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// build writes the descriptor, the ModuleTemplate and the ModuleReleaseMeta.
func build(req *Request, in *inputs, manager *v1beta2.Manager) (*Result, error) {
	sign, err := newSigning(req, in.defaultCR)
	if err != nil {
		return nil, err
	}
	yamlDoc, jsonDoc, err := buildDescriptor(req.ComponentName, req.Version, req.Provider, req.Registry, in.layers, sign)
	if err != nil {
		return nil, err
	}
	var signed *SignatureInfo
	if sign != nil {
		signed = sign.info
	}
	embedded := []byte("{}")
	if req.EmbedDescriptor {
		embedded = jsonDoc
	}
	tmpl, err := newTemplate(templateInput{
		module: req.Name, version: req.Version, namespace: req.Namespace, mandatory: req.Mandatory,
		descriptor: embedded, defaultCR: in.defaultCR, manager: manager, signature: signed,
	})
	if err != nil {
		return nil, err
	}
	result := &Result{
		Module: req.Name, Version: req.Version, Component: req.ComponentName,
		Repository: oci.ComponentRepository(req.Registry, req.ComponentName), Tag: oci.VersionTag(req.Version),
		Manager: manager, DryRun: req.DryRun, Descriptor: yamlDoc, Template: tmpl, Signature: signed,
	}
	for _, l := range in.layers {
		result.Layers = append(result.Layers, LayerInfo{
			Name: l.Name, Type: l.Type, MediaType: l.MediaType, Digest: l.Digest(), Size: int64(len(l.Data)), Source: l.Source,
		})
	}
	if req.Mandatory || len(req.Channels) > 0 {
		result.ReleaseMeta, err = mergeReleaseMeta(in.releaseMeta, releaseInput{
			module: req.Name, component: req.ComponentName, version: req.Version, namespace: req.Namespace,
			channels: req.Channels, mandatory: req.Mandatory,
		})
		if err != nil {
			return nil, invalid("--release-meta %s: %w", req.ReleaseMeta, err)
		}
	}
	return result, nil
}

func flagOf(l Layer) string {
	if l.Name == ResourceHelmChart {
		return "--chart"
	}
	return "--manifest"
}

func summary(cr *unstructured.Unstructured, manager *v1beta2.Manager) string {
	s := ""
	if cr != nil {
		s += ", default CR " + describe(cr)
	}
	if manager != nil {
		s += fmt.Sprintf(", manager %s %s/%s", manager.Kind, manager.Namespace, manager.Name)
	}
	return s
}

// push uploads the layers, then the component version that references them.
func push(ctx context.Context, req *Request, access Access, p *prepared) error {
	host := registryHost(req.Registry)
	keys, err := access.keychain(host)
	if err != nil {
		return err
	}
	opts := access.ociOptions(host, req.plainHTTP)
	if err := checkPublished(ctx, req, opts, keys, p.result); err != nil {
		return err
	}
	pusher := oci.NewPusher(opts)
	repo := p.result.Repository
	access.printf("pushing    %s to %s", plural(len(p.layers), "layer"), repo)
	blobs := make([]oci.LocalBlob, len(p.layers))
	for i, l := range p.layers {
		start := time.Now()
		d, err := pusher.PushBlob(ctx, repo, l.Data, l.MediaType, keys)
		if err != nil {
			return registryError(err)
		}
		access.printf("pushed     %-12s %9s  %s  %s  %s", l.Name, size(d.Size), d.Digest, l.MediaType, time.Since(start).Round(time.Millisecond))
		blobs[i] = oci.LocalBlob{MediaType: l.MediaType, Data: l.Data}
	}
	pushed, err := pusher.PushComponentVersion(ctx, p.result.Descriptor, blobs, keys)
	if err != nil {
		return registryError(err)
	}
	p.result.ManifestDigest = pushed.Manifest.Digest
	state := "published"
	if p.result.Unchanged {
		state = "unchanged"
	}
	access.printf("%-10s %s:%s  manifest %s", state, pushed.Repository, pushed.Tag, pushed.Manifest.Digest)
	return nil
}

// checkPublished refuses to replace a published version with other
// content: ModuleTemplates in the field point at its digests, and a
// version is a promise that its content does not change.
func checkPublished(ctx context.Context, req *Request, opts oci.Options, keys authn.Keychain, result *Result) error {
	fetcher, err := oci.NewFetcher(opts)
	if err != nil {
		return registryError(err)
	}
	existing, err := fetcher.ComponentDescriptor(ctx, result.Repository, req.Version, keys)
	switch {
	case errors.Is(err, oci.ErrNotFound):
		return nil
	case err != nil:
		return registryError(fmt.Errorf("checking whether %s:%s is published: %w", result.Component, req.Version, err))
	}
	same, err := sameDescriptor(existing, result.Descriptor)
	if err != nil {
		return verificationFailed("the registry's descriptor of %s:%s is unreadable: %w", result.Component, req.Version, err)
	}
	if same {
		result.Unchanged = true
		return nil
	}
	if !req.Overwrite {
		return invalid("%s:%s is already published with other content in %s; publish a new version (or replace it with --overwrite)",
			result.Component, req.Version, result.Repository)
	}
	return nil
}
