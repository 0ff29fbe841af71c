package manifest

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
)

// inventory is what a deletion removes: everything the module applied,
// also what no status recorded (a first apply that ended before its status
// was written, a status lost). That is status.synced; what the module
// renders now, by name; what carries the module's labels and this
// Manifest's ManifestLabel anywhere in the runtime, of the kinds of both
// (namespaced and cluster-scoped); and what carries the module's labels,
// of its namespaced kinds, in the namespaces that are this Manifest's
// alone — the Kyma's namespace in the runtime and those the module
// created — for objects placed before the ManifestLabel was. The module's
// labels alone do not do for the whole runtime: several Kymas may share
// one API server (each in its own namespace, as the suites and the scale
// harness run them), and the same module's objects of another Kyma carry
// the same labels, but not this Manifest's UID. A Namespace counts as
// created by the module, with its UID, when status.created records it or
// it carries this Manifest's CreatedByAnnotation, set in its create.
// Removal deletes only objects that carry the module's labels, so the
// inventory adds nothing of anyone else's.
type inventory struct {
	resources []shared.Resource
	created   []v1beta2.CreatedResource
}

// takeInventory lists what the module holds in the runtime. A module that
// no longer renders (its layers gone) has its record swept.
func (r *Reconciler) takeInventory(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime) (inventory, error) {
	union, _ := unionOf(mf.Status.Synced, r.rendered(ctx, mf, rt))
	inv := inventory{resources: union, created: slices.Clone(mf.Status.Created)}
	selector := client.MatchingLabels{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: removal.ModuleName(mf)}
	if mf.UID != "" {
		owned := client.MatchingLabels{shared.ManifestLabel: string(mf.UID)}
		for k, v := range selector {
			owned[k] = v
		}
		for _, gvk := range kindsOf(union) {
			found, err := sweep(ctx, rt, gvk, "", owned)
			if err != nil {
				return inv, err
			}
			inv.resources, _ = unionOf(inv.resources, found)
		}
	}
	if err := inv.namespacesCreatedBy(ctx, rt, mf); err != nil {
		return inv, err
	}
	scope := []string{rt.Namespace}
	for _, c := range inv.created {
		if removal.IsNamespace(c.Resource) && !slices.Contains(scope, c.Name) {
			scope = append(scope, c.Name)
		}
	}
	for _, gvk := range namespacedKinds(inv.resources, rt) {
		for _, ns := range scope {
			found, err := sweep(ctx, rt, gvk, ns, selector)
			if err != nil {
				return inv, err
			}
			inv.resources, _ = unionOf(inv.resources, found)
		}
	}
	return inv, nil
}

// rendered is what the module renders now, as resources; nothing when it
// does not render.
func (r *Reconciler) rendered(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime) []shared.Resource {
	out, err := r.Source.Render(ctx, mf, Target{Namespace: rt.Namespace, Namespaced: namespacedIn(rt)})
	if err != nil {
		log.FromContext(ctx).Info("the module does not render: its deletion removes what its status records", "reason", err.Error())
		return nil
	}
	return resourcesOf(out.Objects)
}

// namespacesCreatedBy adds to the created records the listed Namespaces
// that carry mf's CreatedByAnnotation and the module's labels.
func (inv *inventory) namespacesCreatedBy(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest) error {
	if mf.UID == "" {
		return nil
	}
	for _, res := range inv.resources {
		if !removal.IsNamespace(res) || slices.ContainsFunc(inv.created, func(c v1beta2.CreatedResource) bool {
			return removal.Key(c.Resource) == removal.Key(res)
		}) {
			continue
		}
		ns := &corev1.Namespace{}
		err := rt.Get(ctx, client.ObjectKey{Name: res.Name}, ns)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading Namespace %s: %w", res.Name, err)
		}
		if ns.Annotations[CreatedByAnnotation] == string(mf.UID) && ns.Labels[shared.ModuleNameLabel] == removal.ModuleName(mf) {
			inv.created = append(inv.created, v1beta2.CreatedResource{Resource: res, UID: ns.UID})
		}
	}
	return nil
}

// kindsOf are the kinds among resources, one version each.
func kindsOf(resources []shared.Resource) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	seen := map[schema.GroupKind]bool{}
	for _, res := range resources {
		gvk := schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}
		if !seen[gvk.GroupKind()] {
			seen[gvk.GroupKind()] = true
			out = append(out, gvk)
		}
	}
	return out
}

// namespacedKinds are the namespaced kinds among resources (one version
// each) that the runtime serves.
func namespacedKinds(resources []shared.Resource, rt *remote.Runtime) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, gvk := range kindsOf(resources) {
		if m, err := rt.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace {
			out = append(out, gvk)
		}
	}
	return out
}

// sweep lists the objects of kind gvk in namespace ns ("": in the whole
// runtime) that carry the selector's labels.
func sweep(ctx context.Context, rt *remote.Runtime, gvk schema.GroupVersionKind, ns string, selector client.MatchingLabels) ([]shared.Resource, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{selector}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	err := rt.List(ctx, list, opts...)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		// The sweep is the fallback to the record and the render: a runtime
		// role without list leaves it out instead of blocking the removal.
		log.FromContext(ctx).Info("cannot sweep the module's objects: the runtime credentials may not list them", "kind", gvk.Kind, "namespace", ns)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing the module's %s in %q: %w", gvk.Kind, ns, err)
	}
	out := make([]shared.Resource, 0, len(list.Items))
	for _, item := range list.Items {
		out = append(out, shared.Resource{Name: item.Name, Namespace: item.Namespace,
			GroupVersionKind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}})
	}
	return out, nil
}
