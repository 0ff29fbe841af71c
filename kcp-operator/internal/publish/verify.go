package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// VerifyRequest is a published module version to check.
type VerifyRequest struct {
	// Template is the module version's ModuleTemplate.
	Template *v1beta2.ModuleTemplate
	// RuntimeNamespace is what the module is rendered for; default
	// kyma-system, as the operator renders it.
	RuntimeNamespace string
	// Trust are the anchors to check the template's signature against;
	// nil checks no signature (a signed template is then a warning).
	Trust *signature.Trust
	// Registry is where a template without a descriptor (descriptor: {})
	// has it: host[:port][/path], as given to publish; http:// means plain HTTP.
	Registry string
	// Component is the OCM component of such a template (default
	// ComponentPrefix + the module name).
	Component string
}

// Verified is a module version as the operator would install it.
type Verified struct {
	Module     string `json:"module"`
	Version    string `json:"version"`
	Component  string `json:"component"`
	Repository string `json:"repository"`
	// Type of the install layer: raw-manifest or helm-chart.
	Type   string      `json:"type"`
	Layers []LayerInfo `json:"layers"`
	// Objects are the module's resources, rendered and sorted for apply.
	Objects []*unstructured.Unstructured `json:"-"`
	// DefaultCR is the template's default CR as the operator creates it
	// (in the runtime namespace when it names none); nil without one.
	DefaultCR *unstructured.Unstructured `json:"-"`
	Warnings  []string                   `json:"warnings,omitempty"`
	// Signature is the signature that verified; nil when none was checked.
	Signature *SignatureInfo `json:"signature,omitempty"`
}

// Verify does what the operator will do with a ModuleTemplate, without a
// cluster: it reads the descriptor, checks its signature against
// req.Trust, checks that the registry holds the same descriptor for the
// version, fetches every layer (checking each against its digest), renders
// the module, and checks the default CR against the module's CRDs.
func Verify(ctx context.Context, req VerifyRequest, access Access) (*Verified, error) {
	if req.Template == nil {
		return nil, usageError("no ModuleTemplate to verify")
	}
	if req.RuntimeNamespace == "" {
		req.RuntimeNamespace = shared.DefaultRuntimeNamespace
	}
	tmpl := req.Template
	module := ModuleName(tmpl)
	if module == "" {
		return nil, invalid("ModuleTemplate %s has neither spec.moduleName nor the label %s", tmpl.Name, shared.ModuleNameLabel)
	}
	doc, err := registryDescriptor(ctx, req, access, module)
	if err != nil {
		return nil, err
	}
	raw := tmpl.Spec.Descriptor.Raw
	if doc != nil {
		raw = doc.Raw
	}
	d, err := descriptor.Parse(raw)
	if err != nil {
		return nil, invalid("ModuleTemplate %s: spec.descriptor: %w", tmpl.Name, err)
	}
	repo, err := d.OCIRepository()
	if err != nil {
		return nil, invalid("ModuleTemplate %s: spec.descriptor: %w", tmpl.Name, err)
	}
	v := &Verified{Module: module, Version: d.Version, Component: d.Name, Repository: repo}
	if err := verifySignature(req, doc, access, v); err != nil {
		return nil, err
	}
	fetched, err := fetchModule(ctx, d, tmpl, doc, access, v)
	if err != nil {
		return nil, err
	}
	if err := renderVerified(ctx, req, fetched, v); err != nil {
		return nil, err
	}
	access.printf("verified   %s %s: %d objects%s", module, d.Version, len(v.Objects), summary(v.DefaultCR, tmpl.Spec.Manager))
	access.warn(v.Warnings...)
	return v, nil
}

// ModuleName returns the module a template belongs to: spec.moduleName,
// else its module-name label.
func ModuleName(t *v1beta2.ModuleTemplate) string {
	if t.Spec.ModuleName != "" {
		return t.Spec.ModuleName
	}
	return t.Labels[shared.ModuleNameLabel]
}

// moduleLayers are the resources the operator fetches, by name.
var moduleLayers = map[string]bool{ResourceRawManifest: true, ResourceHelmChart: true, ResourceConfig: true}

// fetchModule checks the registry's descriptor and fetches every layer.
func fetchModule(ctx context.Context, d *descriptor.Descriptor, tmpl *v1beta2.ModuleTemplate, doc *signature.Document, access Access, v *Verified) (map[string]Layer, error) {
	host := registryHost(v.Repository)
	keys, err := access.keychain(host)
	if err != nil {
		return nil, err
	}
	fetcher, err := oci.NewFetcher(access.ociOptions(host, false))
	if err != nil {
		return nil, registryError(err)
	}
	if doc == nil { // a descriptor read from the registry is the stored one
		if err := checkStoredDescriptor(ctx, fetcher, keys, d, tmpl, v.Repository); err != nil {
			return nil, err
		}
	}
	access.printf("found      %s:%s in %s", d.Name, d.Version, v.Repository)
	layers := map[string]Layer{}
	for _, r := range d.Resources {
		kind := r.Access.Kind()
		if !moduleLayers[r.Name] && kind != descriptor.AccessLocalBlob && kind != descriptor.AccessOCIBlob {
			access.printf("skipped    %-12s %s with %s access: not a layer of the module", r.Name, r.Type, r.Access.Type)
			continue
		}
		l, err := fetchLayer(ctx, fetcher, keys, d, r)
		if err != nil {
			return nil, err
		}
		layers[r.Name] = l
		v.Layers = append(v.Layers, LayerInfo{Name: r.Name, Type: r.Type, MediaType: l.MediaType, Digest: l.Digest(), Size: int64(len(l.Data))})
		access.printf("fetched    %-12s %9s  %s  %s  digest verified", r.Name, size(int64(len(l.Data))), l.Digest(), l.MediaType)
	}
	return layers, nil
}

func checkStoredDescriptor(ctx context.Context, f *oci.Fetcher, keys authn.Keychain, d *descriptor.Descriptor, tmpl *v1beta2.ModuleTemplate, repo string) error {
	stored, err := f.ComponentDescriptor(ctx, repo, d.Version, keys)
	if errors.Is(err, oci.ErrNotFound) {
		return &Error{Kind: ErrRegistry, Err: fmt.Errorf("%s:%s is not published in %s: %w", d.Name, d.Version, repo, err)}
	}
	if err != nil {
		return registryError(err)
	}
	same, err := sameDescriptor(stored, tmpl.Spec.Descriptor.Raw)
	if err != nil {
		return verificationFailed("the registry's descriptor of %s:%s is unreadable: %w", d.Name, d.Version, err)
	}
	if !same {
		return verificationFailed("the registry holds another descriptor for %s:%s than ModuleTemplate %s: "+
			"the version was published again with other content, or the template was edited", d.Name, d.Version, tmpl.Name)
	}
	return nil
}

func fetchLayer(ctx context.Context, f *oci.Fetcher, keys authn.Keychain, d *descriptor.Descriptor, r descriptor.Resource) (Layer, error) {
	where, err := d.LayerOf(r.Name)
	if err != nil {
		return Layer{}, invalid("spec.descriptor: %w", err)
	}
	blob, err := f.Fetch(ctx, oci.RefFromLayer(where), keys)
	if err != nil {
		return Layer{}, registryError(err)
	}
	mediaType := blob.MediaType
	if mediaType == "" {
		mediaType = r.Access.MediaType
	}
	return Layer{Name: r.Name, Type: r.Type, MediaType: mediaType, Source: r.Name + " layer " + blob.Digest, Data: blob.Data}, nil
}

// renderVerified renders the fetched layers as the operator does: the raw
// manifests, else the Helm chart with the config values.
func renderVerified(ctx context.Context, req VerifyRequest, layers map[string]Layer, v *Verified) error {
	install, ok := layers[ResourceRawManifest]
	if !ok {
		if install, ok = layers[ResourceHelmChart]; !ok {
			return verificationFailed("the descriptor of %s:%s has neither a %s nor a %s resource", v.Component, v.Version, ResourceRawManifest, ResourceHelmChart)
		}
	}
	v.Type = install.Name
	var config *Layer
	if c, ok := layers[ResourceConfig]; ok {
		config = &c
	}
	r, err := renderModule(ctx, renderInput{module: v.Module, namespace: req.RuntimeNamespace, install: install, config: config})
	if err != nil {
		return verificationFailed("rendering the %s: %w", install.Source, err)
	}
	v.Objects, v.Warnings = r.objects, append(v.Warnings, r.warnings...)
	if data := req.Template.Spec.Data; data != nil {
		cr := data.DeepCopy()
		if err := checkDefaultCR(cr, r.kinds); err != nil {
			return verificationFailed("the default CR (%s) of ModuleTemplate %s: %w", describe(cr), req.Template.Name, err)
		}
		if cr.GetNamespace() == "" {
			cr.SetNamespace(req.RuntimeNamespace)
		}
		v.DefaultCR = cr
	}
	if m := req.Template.Spec.Manager; m != nil && !hasObject(r.objects, m) {
		v.Warnings = append(v.Warnings, fmt.Sprintf("the manager %s %s/%s is not among the module's objects: the module will not become ready", m.Kind, m.Namespace, m.Name))
	}
	return nil
}

func hasObject(objs []*unstructured.Unstructured, m *v1beta2.Manager) bool {
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if gvk.Group == m.Group && gvk.Kind == m.Kind && obj.GetName() == m.Name && obj.GetNamespace() == m.Namespace {
			return true
		}
	}
	return false
}

// registryDescriptor reads the descriptor of a template that embeds none
// (descriptor: {}, what publish writes unless told to embed) from
// req.Registry, as the operator does; nil for a template that embeds one.
func registryDescriptor(ctx context.Context, req VerifyRequest, access Access, module string) (*signature.Document, error) {
	tmpl := req.Template
	if !descriptor.Absent(tmpl.Spec.Descriptor.Raw) {
		return nil, nil
	}
	if req.Registry == "" {
		return nil, usageError("ModuleTemplate %s has no descriptor (descriptor: {}): it is in the registry; pass --registry", tmpl.Name)
	}
	component := req.Component
	if component == "" {
		component = ComponentPrefix + module
	}
	host := registryHost(req.Registry)
	keys, err := access.keychain(host)
	if err != nil {
		return nil, err
	}
	fetcher, err := oci.NewFetcher(access.ociOptions(host, strings.HasPrefix(req.Registry, "http://")))
	if err != nil {
		return nil, registryError(err)
	}
	repo := oci.ComponentRepository(strings.TrimPrefix(strings.TrimPrefix(req.Registry, "http://"), "https://"), component)
	cv, err := fetcher.ComponentVersion(ctx, repo, tmpl.Spec.Version, keys)
	if errors.Is(err, oci.ErrNotFound) {
		return nil, &Error{Kind: ErrRegistry, Err: fmt.Errorf("%s:%s is not published in %s: %w", component, tmpl.Spec.Version, repo, err)}
	}
	if err != nil {
		return nil, registryError(err)
	}
	access.printf("read       the descriptor of %s:%s from %s", component, tmpl.Spec.Version, repo)
	return &signature.Document{Raw: cv.Descriptor, Digest: cv.DescriptorDigest}, nil
}
