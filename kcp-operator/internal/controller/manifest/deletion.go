package manifest

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/requeue"
)

// maxBlockersNamed bounds the user CRs a blocked deletion names.
const maxBlockersNamed = 5

// reconcileDeletion removes the module: the default CR first, then — once
// no user CRs of the module's kinds remain — the module's objects, CRDs and
// namespaces last, then the finalizer. A released (unmanaged) module keeps
// its objects.
func (r *Reconciler) reconcileDeletion(ctx context.Context, mf *v1beta2.Manifest) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mf, shared.ManifestFinalizer) {
		return ctrl.Result{}, nil
	}
	if mf.Annotations[shared.UnmanagedAnnotation] == shared.EnabledValue {
		r.event(mf, false, "Released", "the module is unmanaged: its resources stay in the runtime")
		return requeue.OnConflict(r.removeFinalizer(ctx, mf))
	}
	rt, err := r.runtime(ctx, mf)
	if err != nil {
		obs := failed(mf, v1beta2.ConditionInstallation, "RuntimeUnreachable", fmt.Errorf("cannot remove the module: %w", err))
		obs.state = shared.StateDeleting
		return ctrl.Result{}, joinErr(r.writeStatus(ctx, mf, obs), err)
	}
	waiting, err := r.removeModule(ctx, mf, rt)
	if err != nil {
		r.Runtimes.Forget(rt, err)
		obs := failed(mf, v1beta2.ConditionInstallation, "DeletionFailed", err)
		obs.state = shared.StateDeleting
		return ctrl.Result{}, joinErr(r.writeStatus(ctx, mf, obs), err)
	}
	if waiting != nil {
		if err := r.writeStatus(ctx, mf, *waiting); err != nil {
			return ctrl.Result{}, err
		}
		return r.Requeue.After(waiting.state), nil
	}
	return requeue.OnConflict(r.removeFinalizer(ctx, mf))
}

// removeModule runs the deletion steps; a non-nil observation means a step
// is not done yet.
func (r *Reconciler) removeModule(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime) (*observation, error) {
	defaultCR, err := r.deleteDefaultCR(ctx, mf, rt)
	if err != nil {
		return nil, err
	}
	if defaultCR != "" {
		return deleting("waiting for the module CR " + defaultCR + " to be deleted"), nil
	}
	blockers, err := userResources(ctx, rt, mf)
	if err != nil {
		return nil, err
	}
	if len(blockers) > 0 {
		obs := &observation{state: shared.StateWarning, keepSynced: true,
			message: "deletion is blocked by resources of the module's kinds that users created: " + strings.Join(blockers, ", ")}
		obs.conditions = []metav1.Condition{condition(v1beta2.ConditionInstallation, false, "DeletionBlocked", obs.message)}
		return obs, nil
	}
	if err := deleteResources(ctx, rt, mf.Status.Synced); err != nil {
		return nil, err
	}
	return nil, nil
}

func deleting(msg string) *observation {
	return &observation{state: shared.StateDeleting, message: msg, keepSynced: true,
		conditions: []metav1.Condition{condition(v1beta2.ConditionInstallation, false, "Deleting", msg)}}
}

// deleteDefaultCR deletes the CR the Manifest created and returns its name
// while it still exists.
func (r *Reconciler) deleteDefaultCR(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime) (string, error) {
	if mf.Spec.Resource == nil || mf.Spec.CustomResourcePolicy == v1beta2.CustomResourcePolicyIgnore {
		return "", nil
	}
	cr := defaultCR(mf, rt)
	err := rt.Get(ctx, client.ObjectKeyFromObject(cr), cr)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading the module CR %s: %w", describe(cr), err)
	}
	if cr.GetDeletionTimestamp().IsZero() {
		if err := rt.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("deleting the module CR %s: %w", describe(cr), err)
		}
	}
	return describe(cr), nil
}

// defaultCR is the module CR with its runtime namespace filled in (a CR
// without namespace is cluster-scoped or defaulted as on creation).
func defaultCR(mf *v1beta2.Manifest, rt *remote.Runtime) *unstructured.Unstructured {
	cr := mf.Spec.Resource.DeepCopy()
	if cr.GetNamespace() == "" {
		if namespaced, err := namespacedIn(rt)(cr.GroupVersionKind()); err == nil && namespaced {
			cr.SetNamespace(rt.Namespace)
		}
	}
	return cr
}

// userResources lists the objects of the kinds the module's CRDs define,
// other than the default CR, by name.
func userResources(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest) ([]string, error) {
	var defaultKey string
	if mf.Spec.Resource != nil && mf.Spec.CustomResourcePolicy != v1beta2.CustomResourcePolicyIgnore {
		defaultKey = describe(defaultCR(mf, rt))
	}
	var found []string
	for _, res := range mf.Status.Synced {
		if res.Group != "apiextensions.k8s.io" || res.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := rt.Get(ctx, client.ObjectKey{Name: res.Name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading CRD %s: %w", res.Name, err)
		}
		names, err := objectsOf(ctx, rt, crd)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if n != defaultKey && len(found) < maxBlockersNamed {
				found = append(found, n)
			}
		}
	}
	return found, nil
}

func objectsOf(ctx context.Context, rt *remote.Runtime, crd *apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			version = v.Name
		}
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
	if err := rt.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %s: %w", crd.Spec.Names.Plural, err)
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		item := &list.Items[i]
		item.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind})
		names = append(names, describe(item))
	}
	return names, nil
}

func (r *Reconciler) removeFinalizer(ctx context.Context, mf *v1beta2.Manifest) error {
	return finalizer.Remove(ctx, r.KCP, mf, shared.ManifestFinalizer)
}

func joinErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
