package resolve

import (
	"context"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/componentsource"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// WithComponents makes the resolver read the descriptors that templates
// do not embed (spec.descriptor: {}, as the public modulectl writes them)
// from the registry: the component the module's ModuleReleaseMeta names
// (spec.ocmComponentName) at the template's spec.version. Without it, or
// with a nil source, such a template does not resolve, and the error says
// that no registry is configured.
func (r *Resolver) WithComponents(s *componentsource.Source) *Resolver {
	r.components = s
	return r
}

// Embeds reports whether a template carries its descriptor (see descriptor.Absent).
func Embeds(t *v1beta2.ModuleTemplate) bool { return !descriptor.Absent(t.Spec.Descriptor.Raw) }

// descriptorOf returns the template's descriptor, and the document it came
// from when that is the registry.
func (r *Resolver) descriptorOf(ctx context.Context, name string, t *v1beta2.ModuleTemplate, component string) (*descriptor.Descriptor, *signature.Document, error) {
	if Embeds(t) {
		d, err := descriptor.Parse(t.Spec.Descriptor.Raw)
		if err != nil {
			return nil, nil, fail(name, "ModuleTemplate %s/%s has an invalid descriptor: %v", t.Namespace, t.Name, err)
		}
		return d, nil, nil
	}
	f, err := r.components.Get(ctx, component, t.Spec.Version)
	if err != nil {
		e := fail(name, "ModuleTemplate %s/%s: %v", t.Namespace, t.Name, err)
		e.Code = componentsource.ReasonOf(err)
		return nil, nil, e
	}
	return f.Descriptor, &signature.Document{Raw: f.Raw, Parsed: f.Descriptor, Digest: f.Digest}, nil
}
