package resolve

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/componentsource"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// Module is a resolved module.
type Module struct {
	// Name is the module as the Kyma names it (for mandatory modules, the module name).
	Name string
	// ModuleName is the canonical module name.
	ModuleName string
	Channel    string
	Version    string
	// FQDN is the OCM component name.
	FQDN string
	// Template is shared with the cache: never modify it.
	Template   *v1beta2.ModuleTemplate
	Descriptor *descriptor.Descriptor
	Mandatory  bool
	// Beta and Internal say whether the module is gated.
	Beta, Internal bool
	// Signature is what the signature check found (see WithSignatures).
	Signature signature.Verdict
	// Document is the descriptor read from the registry when the template
	// embeds none (see WithComponents); nil for an embedded descriptor.
	Document *signature.Document
}

// Error says why a module did not resolve; the message is meant for users.
type Error struct {
	Module string
	Reason string
	// Code is a CamelCase reason for conditions when the descriptor could
	// not be read from the registry (componentsource reasons); "" otherwise.
	Code string
}

func (e *Error) Error() string { return fmt.Sprintf("module %q: %s", e.Module, e.Reason) }

func fail(module, format string, args ...any) *Error {
	return &Error{Module: module, Reason: fmt.Sprintf(format, args...)}
}

// Resolver resolves modules from the cache.
type Resolver struct {
	reader client.Reader
	// templateNamespaces are where a namespace/name reference may point
	// besides the Kyma's own namespace.
	templateNamespaces []string
	// signatures checks the templates found; nil checks nothing.
	signatures *signature.Checker
	// components reads the descriptors templates do not embed; nil has no registry.
	components *componentsource.Source
}

// New returns a Resolver that reads through reader (the manager's cache,
// with Indexes registered). A namespace/name module reference resolves in
// the Kyma's own namespace and in templateNamespaces, nowhere else.
func New(reader client.Reader, templateNamespaces ...string) *Resolver {
	return &Resolver{reader: reader, templateNamespaces: templateNamespaces}
}

// Resolve finds the template of module m of kyma and checks its signature.
func (r *Resolver) Resolve(ctx context.Context, kyma *v1beta2.Kyma, m v1beta2.Module) (*Module, error) {
	channel := kyma.EffectiveChannel(m)
	res, err := r.byReleaseMeta(ctx, kyma, m.Name, channel)
	if err == nil && res == nil {
		res, err = r.byTemplate(ctx, kyma, m.Name, channel)
	}
	if err != nil {
		return nil, err
	}
	if err := r.checkSignature(ctx, kyma, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (r *Resolver) byReleaseMeta(ctx context.Context, kyma *v1beta2.Kyma, name, channel string) (*Module, error) {
	var metas v1beta2.ModuleReleaseMetaList
	if err := r.reader.List(ctx, &metas, client.InNamespace(kyma.Namespace),
		client.MatchingFields{IndexReleaseMetaModule: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ModuleReleaseMetas of %q: %w", name, err)
	}
	switch len(metas.Items) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fail(name, "%d ModuleReleaseMetas in namespace %s claim it; want one", len(metas.Items), kyma.Namespace)
	}
	meta := &metas.Items[0]
	if meta.Spec.Mandatory != nil {
		return nil, fail(name, "it is mandatory: it is installed into every Kyma and must not be listed")
	}
	if err := gate(name, kyma, meta.Spec.Beta, meta.Spec.Internal); err != nil {
		return nil, err
	}
	if err := restricted(name, kyma, meta); err != nil {
		return nil, err
	}
	v, ok := meta.VersionFor(channel)
	if !ok {
		return nil, fail(name, "ModuleReleaseMeta %s has no version for channel %q (channels: %s)",
			meta.Name, channel, strings.Join(channelsOf(meta), ", "))
	}
	t, err := r.templateOfVersion(ctx, kyma.Namespace, meta.Spec.ModuleName, v)
	if err != nil {
		return nil, err
	}
	beta, internal := metaGates(meta, t)
	if err := gate(name, kyma, beta, internal); err != nil {
		return nil, err
	}
	return r.build(ctx, name, channel, t, beta, internal, meta.Spec.OcmComponentName)
}

// metaGates are the gates of a template found through a release meta: the
// meta's flags and the template's own labels alike, as the catalog shows
// them — a template labelled beta stays beta whichever way it is found.
func metaGates(meta *v1beta2.ModuleReleaseMeta, t *v1beta2.ModuleTemplate) (beta, internal bool) {
	return meta.Spec.Beta || t.IsBeta(), meta.Spec.Internal || t.IsInternal()
}

func (r *Resolver) templateOfVersion(ctx context.Context, ns, module, v string) (*v1beta2.ModuleTemplate, error) {
	var byName v1beta2.ModuleTemplate
	// Like the lists, the Gets share the cached object (see Module.Template):
	// a deep copy of the template was a third of what resolving allocated.
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: module + "-" + v}, &byName, client.UnsafeDisableDeepCopy)
	switch {
	case err == nil && ModuleName(&byName) == module && byName.Spec.Version == v:
		return &byName, nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading ModuleTemplate %s/%s-%s: %w", ns, module, v, err)
	}
	candidates, err := r.templates(ctx, ns, IndexTemplateModule, module)
	if err != nil {
		return nil, err
	}
	for i := range candidates {
		if candidates[i].Spec.Version == v {
			return &candidates[i], nil
		}
	}
	return nil, fail(module, "no ModuleTemplate of version %s in namespace %s", v, ns)
}

// byTemplate is the resolution without a release meta.
func (r *Resolver) byTemplate(ctx context.Context, kyma *v1beta2.Kyma, name, channel string) (*Module, error) {
	if t, err := r.templateByName(ctx, kyma, name); err != nil || t != nil {
		if err != nil {
			return nil, err
		}
		return r.buildGated(ctx, name, kyma, channel, t)
	}
	var all []v1beta2.ModuleTemplate
	for _, index := range []string{IndexTemplateModule, IndexTemplateFQDN} {
		found, err := r.templates(ctx, kyma.Namespace, index, name)
		if err != nil {
			return nil, err
		}
		all = append(all, found...)
	}
	if len(all) == 0 {
		return nil, fail(name, "no ModuleReleaseMeta and no ModuleTemplate in namespace %s names this module", kyma.Namespace)
	}
	var inChannel []*v1beta2.ModuleTemplate
	var channels []string
	for i := range all {
		channels = append(channels, all[i].Spec.Channel)
		if all[i].Spec.Channel == channel {
			inChannel = append(inChannel, &all[i])
		}
	}
	if len(inChannel) == 0 {
		slices.Sort(channels)
		return nil, fail(name, "no ModuleTemplate for channel %q (templates exist for channels: %s)",
			channel, strings.Join(slices.Compact(channels), ", "))
	}
	return r.buildGated(ctx, name, kyma, channel, newest(inChannel))
}

// templateByName finds a template named name or namespace/name. A
// namespace/name reference that names a namespace other than the Kyma's
// own and the template namespaces is refused: modules are editable in the
// runtime, and the operator watches other tenants' namespaces too.
func (r *Resolver) templateByName(ctx context.Context, kyma *v1beta2.Kyma, name string) (*v1beta2.ModuleTemplate, error) {
	key := client.ObjectKey{Namespace: kyma.Namespace, Name: name}
	if before, after, ok := strings.Cut(name, "/"); ok && !strings.Contains(after, "/") && !strings.Contains(before, ".") {
		key = client.ObjectKey{Namespace: before, Name: after}
		if before != kyma.Namespace && !slices.Contains(r.templateNamespaces, before) {
			return nil, fail(name, "a ModuleTemplate in namespace %s is not allowed: only the Kyma's namespace %s%s",
				before, kyma.Namespace, r.alsoAllowed())
		}
	} else if ok {
		return nil, nil // an FQDN such as kyma-project.io/module/keda
	}
	var t v1beta2.ModuleTemplate
	if err := r.reader.Get(ctx, key, &t, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ModuleTemplate %s: %w", key, err)
	}
	return &t, nil
}

// alsoAllowed names the template namespaces for an error message.
func (r *Resolver) alsoAllowed() string {
	if len(r.templateNamespaces) == 0 {
		return " (more with --template-namespaces)"
	}
	return " and the template namespaces " + strings.Join(r.templateNamespaces, ", ") + " (--template-namespaces)"
}

func (r *Resolver) templates(ctx context.Context, ns, index, value string) ([]v1beta2.ModuleTemplate, error) {
	var list v1beta2.ModuleTemplateList
	if err := r.reader.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{index: value},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ModuleTemplates by %s=%s: %w", index, value, err)
	}
	return list.Items, nil
}

// buildGated builds a module found without a release meta: no
// ModuleReleaseMeta names its component, so its template must embed the
// descriptor.
func (r *Resolver) buildGated(ctx context.Context, name string, kyma *v1beta2.Kyma, channel string, t *v1beta2.ModuleTemplate) (*Module, error) {
	if err := gate(name, kyma, t.IsBeta(), t.IsInternal()); err != nil {
		return nil, err
	}
	if err := r.restrictedTemplate(ctx, name, kyma, t); err != nil {
		return nil, err
	}
	return r.build(ctx, name, channel, t, t.IsBeta(), t.IsInternal(), "")
}

// build resolves the template's descriptor: the embedded one, else the
// one of component (the release meta's ocmComponentName) at the
// template's version in the registry.
func (r *Resolver) build(ctx context.Context, name, channel string, t *v1beta2.ModuleTemplate, beta, internal bool, component string) (*Module, error) {
	d, doc, err := r.descriptorOf(ctx, name, t, component)
	if err != nil {
		return nil, err
	}
	v := t.Spec.Version
	if v == "" {
		v = d.Version
	}
	module := ModuleName(t)
	if module == "" {
		module = name
	}
	return &Module{
		Name: name, ModuleName: module, Channel: channel, Version: v, FQDN: d.Name,
		Template: t, Descriptor: d, Mandatory: t.Spec.Mandatory, Beta: beta, Internal: internal, Document: doc,
	}, nil
}

func gate(name string, kyma *v1beta2.Kyma, beta, internal bool) error {
	switch {
	case beta && !kyma.IsBeta():
		return fail(name, "it is a beta module; label the Kyma operator.kyma-project.io/beta=true to use it")
	case internal && !kyma.IsInternal():
		return fail(name, "it is an internal module; label the Kyma operator.kyma-project.io/internal=true to use it")
	}
	return nil
}

// newest picks the template with the highest semantic version; templates
// whose version does not parse rank lowest, ties go to the name.
func newest(ts []*v1beta2.ModuleTemplate) *v1beta2.ModuleTemplate {
	return slices.MaxFunc(ts, func(a, b *v1beta2.ModuleTemplate) int {
		va, errA := version.ParseSemantic(a.Spec.Version)
		vb, errB := version.ParseSemantic(b.Spec.Version)
		switch {
		case errA != nil && errB != nil:
			return strings.Compare(a.Name, b.Name)
		case errA != nil:
			return -1
		case errB != nil:
			return 1
		}
		if c := cmpVersions(va, vb); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func channelsOf(m *v1beta2.ModuleReleaseMeta) []string {
	out := make([]string, 0, len(m.Spec.Channels))
	for _, c := range m.Spec.Channels {
		out = append(out, c.Channel)
	}
	return out
}

func cmpVersions(a, b *version.Version) int {
	switch {
	case a.LessThan(b):
		return -1
	case b.LessThan(a):
		return 1
	default:
		return 0
	}
}

// Mandatory returns the mandatory modules for kyma: those whose release
// meta has spec.mandatory, and templates marked mandatory whose module has
// no release meta. Gated modules the Kyma may not use are left out; modules
// that fail to resolve are returned as errors so that one bad module cannot
// hide the others.
func (r *Resolver) Mandatory(ctx context.Context, kyma *v1beta2.Kyma) ([]*Module, []error) {
	var metas v1beta2.ModuleReleaseMetaList
	if err := r.reader.List(ctx, &metas, client.InNamespace(kyma.Namespace),
		client.MatchingFields{IndexMandatory: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, []error{fmt.Errorf("listing mandatory ModuleReleaseMetas: %w", err)}
	}
	var (
		modules []*Module
		errs    []error
		covered = map[string]bool{}
	)
	for i := range metas.Items {
		meta := &metas.Items[i]
		covered[meta.Spec.ModuleName] = true
		if gate(meta.Spec.ModuleName, kyma, meta.Spec.Beta, meta.Spec.Internal) != nil {
			continue
		}
		if selected, err := Selects(meta, kyma); err != nil || !selected {
			if err != nil {
				errs = append(errs, err)
			}
			continue // a restricted mandatory module is installed only where it is selected
		}
		t, err := r.templateOfVersion(ctx, kyma.Namespace, meta.Spec.ModuleName, meta.Spec.Mandatory.Version)
		if err == nil {
			beta, internal := metaGates(meta, t)
			if gate(meta.Spec.ModuleName, kyma, beta, internal) != nil {
				continue
			}
			var m *Module
			if m, err = r.build(ctx, meta.Spec.ModuleName, "", t, beta, internal, meta.Spec.OcmComponentName); err == nil {
				if err = r.checkSignature(ctx, kyma, m); err == nil {
					m.Mandatory = true
					modules = append(modules, m)
					continue
				}
			}
		}
		errs = append(errs, err)
	}
	legacy, err := r.templates(ctx, kyma.Namespace, IndexMandatory, "true")
	if err != nil {
		return modules, append(errs, err)
	}
	newestByModule := map[string]*v1beta2.ModuleTemplate{}
	for i := range legacy {
		t := &legacy[i]
		name := ModuleName(t)
		if name == "" {
			name = t.Name
		}
		if covered[name] || gate(name, kyma, t.IsBeta(), t.IsInternal()) != nil {
			continue
		}
		if cur, ok := newestByModule[name]; !ok || newest([]*v1beta2.ModuleTemplate{cur, t}) == t {
			newestByModule[name] = t
		}
	}
	for name, t := range newestByModule {
		m, err := r.build(ctx, name, "", t, t.IsBeta(), t.IsInternal(), "")
		if err == nil {
			err = r.checkSignature(ctx, kyma, m)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.Mandatory = true
		modules = append(modules, m)
	}
	slices.SortFunc(modules, func(a, b *Module) int { return strings.Compare(a.Name, b.Name) })
	return modules, errs
}
