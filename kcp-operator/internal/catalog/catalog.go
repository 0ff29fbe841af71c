package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// Result counts what the runtime catalog holds and what a sync changed.
type Result struct {
	Templates, ReleaseMetas int
	Applied, Removed        int
}

// Sync makes the runtime catalog of kyma match the KCP.
func Sync(ctx context.Context, kcp client.Reader, kyma *v1beta2.Kyma, rt *remote.Runtime) (Result, error) {
	templates, metas, err := desired(ctx, kcp, kyma, rt.Namespace)
	if err != nil {
		return Result{}, err
	}
	all := make([]client.Object, 0, len(templates)+len(metas))
	for _, t := range templates {
		all = append(all, t)
	}
	for _, m := range metas {
		all = append(all, m)
	}
	res := Result{Templates: len(templates), ReleaseMetas: len(metas)}
	memo := "catalog/" + rt.Namespace
	want := catalogHash(all)
	if rt.Facts.Recall(memo) == want {
		return res, nil
	}
	applied, removed, err := reconcileKind(ctx, rt, &v1beta2.ModuleTemplateList{}, templatesAsObjects(templates))
	res.Applied, res.Removed = res.Applied+applied, res.Removed+removed
	if err != nil {
		return res, err
	}
	applied, removed, err = reconcileKind(ctx, rt, &v1beta2.ModuleReleaseMetaList{}, metasAsObjects(metas))
	res.Applied, res.Removed = res.Applied+applied, res.Removed+removed
	if err != nil {
		return res, err
	}
	rt.Facts.Remember(memo, want)
	return res, nil
}

// Remove deletes the whole catalog from the runtime namespace: one
// request per kind (a delete of the collection our label selects), not one
// per object, so that a Kyma's deletion does not wait for hundreds of
// rate-limited deletes.
func Remove(ctx context.Context, rt *remote.Runtime) error {
	kinds := []struct {
		obj  client.Object
		name string
	}{{&v1beta2.ModuleTemplate{}, v1beta2.ModuleTemplateKind}, {&v1beta2.ModuleReleaseMeta{}, v1beta2.ModuleReleaseMetaKind}}
	selector, err := ours()
	if err != nil {
		return err
	}
	for _, kind := range kinds {
		err := rt.DeleteAllOf(ctx, kind.obj, client.InNamespace(rt.Namespace), selector)
		if err := ignoreNoKind(err); err != nil {
			return fmt.Errorf("removing the runtime catalog's %ss: %w", kind.name, err)
		}
	}
	rt.Facts.Forget("catalog/" + rt.Namespace)
	return nil
}

// ours selects the runtime catalog's objects: this operator's, and those
// the public lifecycle manager's catalog sync left, which a switched
// runtime's catalog replaces or prunes like its own.
func ours() (client.MatchingLabelsSelector, error) {
	r, err := labels.NewRequirement(shared.ManagedByLabel, selection.In, []string{shared.OperatorName, shared.PublicManagedByValue})
	if err != nil {
		return client.MatchingLabelsSelector{}, fmt.Errorf("selecting the runtime catalog: %w", err)
	}
	return client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*r)}, nil
}

// parallelWrites bounds the writes of one sync in flight at once. A new
// runtime receives the whole catalog (hundreds of objects where modules
// keep several versions); one write after another, that took minutes when
// the runtime's API server answered slowly, and the Kyma waited for it.
// The runtime client's rate limiter still caps the rate.
const parallelWrites = 8

// reconcileKind applies the desired objects of one kind whose hash differs
// from the runtime's copy and deletes our objects that are not desired.
func reconcileKind(ctx context.Context, rt *remote.Runtime, list client.ObjectList, desired map[string]client.Object) (int, int, error) {
	selector, err := ours()
	if err != nil {
		return 0, 0, err
	}
	err = rt.List(ctx, list, client.InNamespace(rt.Namespace), selector)
	if err := ignoreNoKind(err); err != nil {
		return 0, 0, fmt.Errorf("listing the runtime catalog: %w", err)
	}
	current := map[string]client.Object{}
	if err == nil {
		for _, obj := range items(list) {
			current[obj.GetName()] = obj
		}
	}
	var stale, gone []client.Object
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		obj := desired[name]
		if cur, ok := current[name]; !ok || cur.GetAnnotations()[shared.SpecHashAnnotation] != obj.GetAnnotations()[shared.SpecHashAnnotation] {
			stale = append(stale, obj)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(current)) {
		if _, ok := desired[name]; !ok {
			gone = append(gone, current[name])
		}
	}
	applied, err := inParallel(ctx, stale, func(ctx context.Context, obj client.Object) error {
		return write(ctx, rt, obj, current[obj.GetName()])
	})
	if err != nil {
		return applied, 0, err
	}
	removed, err := inParallel(ctx, gone, func(ctx context.Context, obj client.Object) error {
		if err := rt.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing %s from the runtime catalog: %w", obj.GetName(), err)
		}
		return nil
	})
	return applied, removed, err
}

// write creates a catalog object the runtime lacks and replaces one that
// differs from the KCP's, at the version the sync listed. The runtime
// catalog is the operator's mirror of the KCP, edits included, so a write
// of the whole object is what it needs; server-side apply would cost the
// runtime's API server a third more per object (tracking every field of
// the descriptor) for an ownership no one shares. A create that finds the
// object, or a replace that finds it changed since the list, fails: the
// next sync lists again.
func write(ctx context.Context, rt *remote.Runtime, obj, current client.Object) error {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if current == nil {
		if err := rt.Create(ctx, obj, client.FieldOwner(runtimewrite.FieldOwner)); err != nil {
			return fmt.Errorf("creating %s %s in the runtime: %w", kind, obj.GetName(), err)
		}
		return nil
	}
	obj.SetResourceVersion(current.GetResourceVersion())
	if err := rt.Update(ctx, obj, client.FieldOwner(runtimewrite.FieldOwner)); err != nil {
		return fmt.Errorf("replacing %s %s in the runtime: %w", kind, obj.GetName(), err)
	}
	return nil
}

// inParallel runs write for each object, parallelWrites at a time, and
// returns how many succeeded; the first error stops the writes not begun.
func inParallel(ctx context.Context, objs []client.Object, write func(context.Context, client.Object) error) (int, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelWrites)
	var done atomic.Int64
	for _, obj := range objs {
		if ctx.Err() != nil {
			break // an error stopped the group; the writes not begun stay undone
		}
		g.Go(func() error {
			if err := write(ctx, obj); err != nil {
				return err
			}
			done.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return int(done.Load()), err
}

// desired returns the runtime copies of the templates and release metas kyma may see.
func desired(ctx context.Context, kcp client.Reader, kyma *v1beta2.Kyma, ns string) ([]*v1beta2.ModuleTemplate, []*v1beta2.ModuleReleaseMeta, error) {
	if labels := kyma.Labels; labels != nil && labels[shared.SyncLabel] == "false" {
		return nil, nil, nil
	}
	var metas v1beta2.ModuleReleaseMetaList
	if err := kcp.List(ctx, &metas, client.InNamespace(kyma.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing ModuleReleaseMetas: %w", err)
	}
	var templates v1beta2.ModuleTemplateList
	if err := kcp.List(ctx, &templates, client.InNamespace(kyma.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing ModuleTemplates: %w", err)
	}
	gated := map[string]bool{} // modules whose release meta hides them from this Kyma
	var outMetas []*v1beta2.ModuleReleaseMeta
	for i := range metas.Items {
		m := &metas.Items[i]
		visible := m.Spec.Mandatory == nil && visibleTo(kyma, m.Spec.Beta, m.Spec.Internal) && selects(ctx, m, kyma)
		if !visible {
			gated[m.Spec.ModuleName] = true
			continue
		}
		outMetas = append(outMetas, runtimeCopy(m, ns, &v1beta2.ModuleReleaseMeta{Spec: m.Spec}).(*v1beta2.ModuleReleaseMeta))
	}
	var outTemplates []*v1beta2.ModuleTemplate
	for i := range templates.Items {
		t := &templates.Items[i]
		if t.Spec.Mandatory || t.Labels[shared.SyncLabel] == "false" || gated[resolve.ModuleName(t)] ||
			!visibleTo(kyma, t.IsBeta(), t.IsInternal()) {
			continue
		}
		outTemplates = append(outTemplates, runtimeCopy(t, ns, &v1beta2.ModuleTemplate{Spec: *t.Spec.DeepCopy()}).(*v1beta2.ModuleTemplate))
	}
	return outTemplates, outMetas, nil
}

func visibleTo(kyma *v1beta2.Kyma, beta, internal bool) bool {
	return (!beta || kyma.IsBeta()) && (!internal || kyma.IsInternal())
}

// selects reports whether a restricted module (spec.kymaSelector) is for
// kyma; a selector that does not parse hides the module from every runtime,
// as it resolves for no Kyma either.
func selects(ctx context.Context, m *v1beta2.ModuleReleaseMeta, kyma *v1beta2.Kyma) bool {
	ok, err := resolve.Selects(m, kyma)
	if err != nil {
		log.FromContext(ctx).Error(err, "restricted module left out of the catalog", "module", m.Spec.ModuleName)
	}
	return ok
}

// runtimeCopy fills out (which carries the spec) with the metadata of the
// runtime copy of src, including the hash of what matters.
func runtimeCopy(src client.Object, ns string, out client.Object) client.Object {
	labels := maps.Clone(src.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels[shared.ManagedByLabel] = shared.OperatorName
	out.SetName(src.GetName())
	out.SetNamespace(ns)
	out.SetLabels(labels)
	gvk := v1beta2.GroupVersion.WithKind(v1beta2.ModuleTemplateKind)
	var spec any
	switch o := out.(type) {
	case *v1beta2.ModuleTemplate:
		spec = o.Spec
	case *v1beta2.ModuleReleaseMeta:
		gvk.Kind = v1beta2.ModuleReleaseMetaKind
		spec = o.Spec
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	out.SetAnnotations(map[string]string{shared.SpecHashAnnotation: runtimewrite.Hash([]any{labels, spec})})
	return out
}

func catalogHash(objs []client.Object) string {
	hashes := make([]string, 0, len(objs))
	for _, o := range objs {
		hashes = append(hashes, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()+"="+o.GetAnnotations()[shared.SpecHashAnnotation])
	}
	slices.Sort(hashes)
	return runtimewrite.Hash(hashes)
}

func templatesAsObjects(ts []*v1beta2.ModuleTemplate) map[string]client.Object {
	out := make(map[string]client.Object, len(ts))
	for _, t := range ts {
		out[t.Name] = t
	}
	return out
}

func metasAsObjects(ms []*v1beta2.ModuleReleaseMeta) map[string]client.Object {
	out := make(map[string]client.Object, len(ms))
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

func items(list client.ObjectList) []client.Object {
	var out []client.Object
	switch l := list.(type) {
	case *v1beta2.ModuleTemplateList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *v1beta2.ModuleReleaseMetaList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}
