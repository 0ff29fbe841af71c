package manifest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// crdEstablishTimeout bounds the wait for a module's CRDs before its other objects.
const crdEstablishTimeout = 30 * time.Second

// apply server-side applies the objects: CRDs first (and waits until they
// are established), then namespaces, then the rest in parallel. It returns
// what the API server stored, and what the apply learnt of ownership (also
// when it failed part way, so that a namespace it created stays recorded).
func (r *Reconciler) apply(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest, objs []*unstructured.Unstructured,
	placed map[string]bool) (*versionSet, *applyOutcome, error) {
	var crds, namespaces, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch {
		case isCRD(o.GroupVersionKind()):
			crds = append(crds, o)
		case isNamespace(o):
			namespaces = append(namespaces, o)
		default:
			rest = append(rest, o)
		}
	}
	versions, outcome := newVersions(), newOutcome(mf.Status.Created)
	for _, batch := range [][]*unstructured.Unstructured{crds, namespaces, rest} {
		if err := r.applyBatch(ctx, rt, mf, batch, placed, versions, outcome); err != nil {
			return nil, outcome, err
		}
		if len(batch) > 0 && isCRD(batch[0].GroupVersionKind()) {
			if err := waitEstablished(ctx, rt, batch); err != nil {
				return nil, outcome, err
			}
		}
	}
	return versions, outcome, nil
}

// applyBatch applies each object the module may hold: a namespace always
// (created first when missing, to know the module made it), any other
// object only when it is new, the module's or nobody's. placed are the
// objects an earlier apply placed; any other, and a placed one the
// runtime no longer has, is created: when that fails because it exists,
// whose it is decides, as for the objects placed before.
func (r *Reconciler) applyBatch(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest, batch []*unstructured.Unstructured,
	placed map[string]bool, versions *versionSet, outcome *applyOutcome) error {
	return forEach(ctx, r.Parallelism, batch, func(ctx context.Context, o *unstructured.Unstructured) error {
		obj := o.DeepCopy()
		var created types.UID
		if isNamespace(o) {
			if !r.Removal.IsProtected(o.GetName(), rt.Namespace) {
				var err error
				if created, err = createNamespace(ctx, rt, o, mf.UID); err != nil {
					return err
				}
			}
		} else {
			made, refused, err := r.place(ctx, rt, mf, o, obj, placed[removal.Key(resourcesOf([]*unstructured.Unstructured{o})[0])], outcome)
			if made {
				versions.add(obj)
			}
			if made || refused || err != nil {
				return err
			}
		}
		if err := runtimewrite.ApplyOwned(ctx, rt, obj); err != nil {
			return fmt.Errorf("applying %s: %w", describe(o), err)
		}
		if isNamespace(o) {
			outcome.namespace(resourcesOf([]*unstructured.Unstructured{o})[0], created, obj.GetUID())
		}
		versions.add(obj)
		return nil
	})
}

// place creates o (into obj, which then holds what was stored) when the
// runtime has no such object, or records in the outcome that the module
// may not apply the one it has; with neither, the module applies it. An
// object placed before, or of a kind whose CRD others hold, is looked up
// in the API server's cache first; after a create found the object, only
// storage may say whose it is.
func (r *Reconciler) place(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest, o, obj *unstructured.Unstructured,
	placedBefore bool, outcome *applyOutcome) (made, refused bool, err error) {
	module := mf.Labels[shared.ModuleNameLabel]
	_, held := outcome.heldCRD(o.GroupVersionKind().GroupKind())
	var h holder
	if held || placedBefore {
		if h, err = ownerOf(ctx, rt, o, module, r.AdoptFrom, true); err != nil {
			return false, false, err
		}
	}
	labelOwner(obj, mf.UID, h.manifest)
	if !held && !h.exists {
		ok, err := runtimewrite.Create(ctx, rt, obj)
		if err != nil {
			return false, false, fmt.Errorf("creating %s: %w", describe(o), err)
		}
		if ok {
			return true, false, nil
		}
		if h, err = ownerOf(ctx, rt, o, module, r.AdoptFrom, false); err != nil {
			return false, false, err
		}
		labelOwner(obj, mf.UID, h.manifest)
	}
	return false, refuse(o, h, outcome), nil
}

// refuse records a refusal when the module may not apply o, held as h.
func refuse(o *unstructured.Unstructured, h holder, outcome *applyOutcome) bool {
	crd, held := outcome.heldCRD(o.GroupVersionKind().GroupKind())
	switch {
	case h.owner != "" && h.leaving:
		outcome.refuse(o, describe(o)+" is being deleted by its owner, "+h.owner, true)
	case h.owner != "":
		outcome.refuse(o, describe(o)+" is owned by "+h.owner, false)
	case held:
		outcome.refuse(o, describe(o)+" waits for its CRD: "+crd.text, crd.leaving)
	default:
		return false
	}
	return true
}

// inPlace reports whether every object of the last apply still exists
// unchanged. It reads workloads whole, which readiness needs next, and of
// the other objects only their metadata. fresh says the objects were
// applied a moment ago (the first recheck of an install): then the API
// server's cache answers, which at worst makes a drift seen at the next
// recheck; any later look reads the storage, so that a change the agent
// pushed without a version is not missed if the cache lags.
func (r *Reconciler) inPlace(ctx context.Context, rt *remote.Runtime, objs []*unstructured.Unstructured, want string, fresh bool) (*versionSet, bool, error) {
	versions := newVersions()
	missing := false
	var mu sync.Mutex
	err := forEach(ctx, r.Parallelism, objs, func(ctx context.Context, o *unstructured.Unstructured) error {
		current, err := readPast(ctx, rt, o, isWorkload(o.GroupVersionKind()), fresh)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			mu.Lock()
			missing = true
			mu.Unlock()
			return nil
		case err != nil:
			return fmt.Errorf("reading %s: %w", describe(o), err)
		}
		versions.add(current)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return versions, !missing && versions.fingerprint() == want, nil
}

// readPast reads what the runtime holds of o, whole or only its metadata,
// past a write a pushed drift event reported; without such a write and
// when cached is set, from the API server's cache.
func readPast(ctx context.Context, rt *remote.Runtime, o *unstructured.Unstructured, whole, cached bool) (client.Object, error) {
	var current client.Object
	var gone error
	key := client.ObjectKeyFromObject(o)
	pending, obj := push.FromContext(ctx), push.Object{GroupKind: o.GroupVersionKind().GroupKind(), NamespacedName: key}
	var opts []client.GetOption
	if cached && !pending.Awaits(obj) {
		opts = append(opts, remote.FromServerCache())
	}
	err := pending.Read(ctx, obj,
		func(ctx context.Context) (string, error) {
			current, gone = &metav1.PartialObjectMetadata{}, nil
			if whole {
				current = &unstructured.Unstructured{}
			}
			current.GetObjectKind().SetGroupVersionKind(o.GroupVersionKind())
			err := rt.Get(ctx, key, current, opts...)
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				gone = err // deleted after the write: nothing to wait for
				return "", nil
			}
			return current.GetResourceVersion(), err
		})
	if err != nil {
		return nil, err
	}
	return current, gone
}

// prune deletes what an earlier apply placed and the render no longer has,
// as far as the removal rules allow; what they keep is in the outcome.
func (r *Reconciler) prune(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest, rendered []shared.Resource, outcome *applyOutcome) error {
	// An object is the same whatever version it was applied in.
	kept := keys(rendered)
	var gone []shared.Resource
	for _, b := range mf.Status.Synced {
		if !kept[removal.Key(b)] {
			gone = append(gone, b)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	module := removal.ModuleOf(mf, rt, rt.Namespace)
	module.Created = outcome.created
	left, err := r.Removal.Delete(ctx, rt, module, gone)
	outcome.kept = left
	if len(left) > 0 {
		r.event(mf, false, "Kept", "no longer rendered but kept in the runtime: "+keptList(left))
	}
	return err
}

// keptList names kept resources for a message.
func keptList(kept []removal.Kept) string {
	out := make([]string, 0, len(kept))
	for _, k := range kept {
		out = append(out, k.String())
	}
	return strings.Join(out, "; ")
}

func waitEstablished(ctx context.Context, rt *remote.Runtime, crds []*unstructured.Unstructured) error {
	for _, c := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, crdEstablishTimeout, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := rt.Get(ctx, client.ObjectKey{Name: c.GetName()}, crd); err != nil {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established: %w", c.GetName(), err)
		}
	}
	return nil
}

// resourcesOf lists objects as status.synced entries.
func resourcesOf(objs []*unstructured.Unstructured) []shared.Resource {
	out := make([]shared.Resource, 0, len(objs))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		out = append(out, shared.Resource{Name: o.GetName(), Namespace: o.GetNamespace(),
			GroupVersionKind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}})
	}
	return out
}

func isNamespace(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind().GroupKind() == schema.GroupKind{Kind: "Namespace"}
}

func isCRD(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

func describe(o client.Object) string {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if o.GetNamespace() == "" {
		return kind + " " + o.GetName()
	}
	return kind + " " + o.GetNamespace() + "/" + o.GetName()
}

// versionSet collects what identifies the stored version of each object:
// its generation where the API server keeps one (spec edits change it,
// status updates do not), else its resource version. It keeps the
// workloads it saw whole, so that readiness need not read them again.
type versionSet struct {
	mu        sync.Mutex
	entries   []string
	workloads map[string]*unstructured.Unstructured
}

func newVersions() *versionSet {
	return &versionSet{workloads: map[string]*unstructured.Unstructured{}}
}

func (v *versionSet) add(o client.Object) {
	version := "g" + strconv.FormatInt(o.GetGeneration(), 10)
	if o.GetGeneration() == 0 {
		version = "r" + o.GetResourceVersion()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.entries = append(v.entries, describe(o)+"="+version)
	if u, ok := o.(*unstructured.Unstructured); ok && isWorkload(u.GroupVersionKind()) {
		v.workloads[describe(o)] = u
	}
}

// workload returns the stored copy of o when the set saw it, else nil.
func (v *versionSet) workload(o client.Object) *unstructured.Unstructured {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.workloads[describe(o)]
}

func (v *versionSet) fingerprint() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	slices.Sort(v.entries)
	return runtimewrite.Hash(strings.Join(v.entries, "\n"))
}

// forEach runs fn for every item with at most n at once and returns the
// first error; the others still finish.
func forEach[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	if n < 1 {
		n = 1
	}
	sem := make(chan struct{}, n)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, item := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, item); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
