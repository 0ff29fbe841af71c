package manifest

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// released reports whether mf's module is released (managed: false): its
// deletion leaves the module's objects in the runtime.
func released(mf *v1beta2.Manifest) bool {
	return mf.Annotations[shared.UnmanagedAnnotation] == shared.EnabledValue
}

// release strips the operator's labels from the objects of a released
// module, which stay in the runtime. The agent's drift watch selects module
// objects by the managed-by label, so objects released with it would keep
// sending drift events that no Manifest acts on any more, and a later
// install would take them for the module's own.
//
// A runtime the KCP can no longer reach by design (Kyma or access Secret
// gone, kubeconfig refused) has nobody left to receive those events: the
// release then goes ahead without the labels stripped, as it did before.
// Any other failure is returned, so that the release is retried.
func (r *Reconciler) release(ctx context.Context, mf *v1beta2.Manifest) error {
	rt, err := r.runtime(ctx, mf)
	if err != nil {
		if runtimeGone(err) {
			r.event(mf, true, "ReleasedWithLabels", "the module is released, but its runtime is out of reach, so its objects keep the operator's labels: "+err.Error())
			return nil
		}
		return fmt.Errorf("releasing the module: %w", err)
	}
	module := mf.Labels[shared.ModuleNameLabel]
	refs := r.releasedObjects(mf, rt)
	err = forEach(ctx, r.Parallelism, refs, func(ctx context.Context, obj *metav1.PartialObjectMetadata) error {
		return r.unlabel(ctx, rt, obj, module)
	})
	if err != nil {
		r.Runtimes.Forget(rt, err)
		return fmt.Errorf("releasing the module: %w", err)
	}
	log.FromContext(ctx).V(1).Info("released the module's objects", "objects", len(refs))
	return nil
}

// runtimeGone reports whether err says that the Manifest's runtime cannot be
// reached until someone changes the KCP, as opposed to a passing failure.
func runtimeGone(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, remote.ErrNoKubeconfig) || remote.Refused(err)
}

// releasedObjects lists the objects the module placed: what it applied and
// its default CR. Protected namespaces (the sync namespace among them) are
// left out: every module applies them, so their labels are not this
// module's to drop.
func (r *Reconciler) releasedObjects(mf *v1beta2.Manifest, rt *remote.Runtime) []*metav1.PartialObjectMetadata {
	out := make([]*metav1.PartialObjectMetadata, 0, len(mf.Status.Synced)+1)
	for _, res := range mf.Status.Synced {
		gvk := schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}
		if gvk.GroupKind() == (schema.GroupKind{Kind: "Namespace"}) && r.Removal.IsProtected(res.Name, rt.Namespace) {
			continue
		}
		out = append(out, partial(gvk, res.Namespace, res.Name))
	}
	if cr := removal.OwnCR(mf, rt, rt.Namespace); cr != nil {
		out = append(out, partial(cr.GroupVersionKind(), cr.GetNamespace(), cr.GetName()))
	}
	return out
}

func partial(gvk schema.GroupVersionKind, namespace, name string) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// unlabel removes the operator's labels from one object with a merge patch
// that names only those keys, so that the object is otherwise untouched.
// The patch carries the resourceVersion it was made from: a concurrent
// write (someone relabelling the object) makes it conflict and start over
// from a fresh read rather than remove a label set meanwhile.
func (r *Reconciler) unlabel(ctx context.Context, rt *remote.Runtime, obj *metav1.PartialObjectMetadata, module string) error {
	key := client.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := rt.Get(ctx, key, obj); err != nil {
			return err
		}
		base := obj.DeepCopy()
		if !r.stripLabels(obj, module) {
			return nil
		}
		patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
		return rt.Patch(ctx, obj, patch, client.FieldOwner(runtimewrite.FieldOwner))
	})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil // gone already: nothing left to carry the labels
	case err != nil:
		return fmt.Errorf("removing the operator's labels from %s: %w", describe(obj), err)
	}
	return nil
}

// stripLabels deletes the labels the operator set on obj and reports
// whether there were any. An object whose managed-by names neither this
// operator nor one it adopts from (r.AdoptFrom), or whose module-name
// names another module, is someone else's: its labels stay as they are.
func (r *Reconciler) stripLabels(obj *metav1.PartialObjectMetadata, module string) bool {
	labels := obj.GetLabels()
	by, ok := labels[shared.ManagedByLabel]
	if !ok || (by != shared.OperatorName && !slices.Contains(r.AdoptFrom, by)) {
		return false
	}
	if m, ok := labels[shared.ModuleNameLabel]; ok && m != module {
		return false
	}
	delete(labels, shared.ManagedByLabel)
	delete(labels, shared.ModuleNameLabel)
	delete(labels, shared.ManifestLabel)
	obj.SetLabels(labels)
	return true
}
