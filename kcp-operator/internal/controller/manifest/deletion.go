package manifest

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// maxBlockersNamed bounds the user CRs a blocked deletion names.
const maxBlockersNamed = 5

// reconcileDeletion removes the module: the default CR first, then — once
// no objects of the module's associated kinds (spec.associatedResources)
// and no user CRs of the module's kinds remain — the module's objects, CRDs
// and namespaces last as the removal rules allow, then the finalizer. The
// objects are those status.synced records and those a sweep by the
// module's labels finds (inventory.go). A
// released (unmanaged) module keeps its objects, without the operator's
// labels. A Manifest the public lifecycle manager still holds by its
// finalizer (deleted before the takeover in ensureFinalizer) is removed
// the same way, and loses that finalizer too.
func (r *Reconciler) reconcileDeletion(ctx context.Context, mf *v1beta2.Manifest) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(mf, shared.ManifestFinalizer) && !shared.HasPublicManifestFinalizer(mf.Finalizers) {
		return ctrl.Result{}, nil
	}
	if released(mf) {
		if err := r.release(ctx, mf); err != nil {
			obs := failed(mf, v1beta2.ConditionInstallation, remote.ConditionReason(err, "ReleaseFailed"), err)
			obs.state = shared.StateDeleting
			return ctrl.Result{}, joinErr(r.writeStatus(ctx, mf, obs), err)
		}
		r.event(mf, false, "Released", "the module is unmanaged: its resources stay in the runtime")
		return schedule.OnConflict(r.removeFinalizer(ctx, mf))
	}
	rt, err := r.runtime(ctx, mf)
	if err != nil {
		obs := failed(mf, v1beta2.ConditionInstallation, remote.ConditionReason(err, "RuntimeUnreachable"), fmt.Errorf("cannot remove the module: %w", err))
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
		unchanged := unchangedFor(mf, *waiting)
		if err := r.writeStatus(ctx, mf, *waiting); err != nil {
			return ctrl.Result{}, err
		}
		return r.Requeue.AfterUnchanged(waiting.state, unchanged), nil
	}
	return schedule.OnConflict(r.removeFinalizer(ctx, mf))
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
	inv, err := r.takeInventory(ctx, mf, rt)
	if err != nil {
		return nil, err
	}
	module := removal.ModuleOf(mf, rt, rt.Namespace)
	module.Created = inv.created
	if waiting, err := r.waitForAssociated(ctx, mf, rt, module, inv.resources); err != nil || waiting != nil {
		return waiting, err
	}
	blockers, err := r.userResources(ctx, rt, module, inv.resources)
	if err != nil {
		return nil, err
	}
	if len(blockers) > 0 {
		return blocked(blockers), nil
	}
	kept, err := r.Removal.Delete(ctx, rt, module, inv.resources)
	if err != nil {
		return nil, err
	}
	var pending []string
	for _, k := range kept {
		if k.Pending { // a user created a CR since the check above
			pending = append(pending, k.String())
		}
	}
	if len(pending) > 0 {
		return blocked(pending), nil
	}
	if len(kept) > 0 {
		r.event(mf, false, "Kept", "removed the module but kept in the runtime: "+keptList(kept))
	}
	return nil, nil
}

func blocked(blockers []string) *observation {
	obs := &observation{state: shared.StateWarning, keepSynced: true,
		message: "deletion is blocked by resources of the module's kinds that users created: " + strings.Join(blockers, ", ")}
	obs.conditions = []metav1.Condition{condition(v1beta2.ConditionInstallation, false, "DeletionBlocked", obs.message)}
	return obs
}

func deleting(msg string) *observation {
	return &observation{state: shared.StateDeleting, message: msg, keepSynced: true,
		conditions: []metav1.Condition{condition(v1beta2.ConditionInstallation, false, "Deleting", msg)}}
}

// deleteDefaultCR deletes the CR the Manifest created and returns its name
// while it still exists.
func (r *Reconciler) deleteDefaultCR(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime) (string, error) {
	cr := removal.OwnCR(mf, rt, rt.Namespace)
	if cr == nil {
		return "", nil
	}
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

// userResources names up to maxBlockersNamed objects of the kinds the
// module's CRDs define, other than its own default CR. A CRD that does not
// carry the module's labels is not the module's, and its CRs are not
// the module's to wait for.
func (r *Reconciler) userResources(ctx context.Context, rt *remote.Runtime, module removal.Module, resources []shared.Resource) ([]string, error) {
	var found []string
	for _, res := range resources {
		if !removal.IsCRD(res) || len(found) >= maxBlockersNamed {
			continue
		}
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind})
		if err := rt.Get(ctx, client.ObjectKey{Name: res.Name}, crd); err != nil {
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("reading CRD %s: %w", res.Name, err)
		}
		if !r.Removal.IsModules(crd, module.Name) {
			continue
		}
		names, err := removal.UserCRs(ctx, rt, res.Name, module.OwnCR)
		if err != nil {
			return nil, err
		}
		found = append(found, names[:min(len(names), maxBlockersNamed-len(found))]...)
	}
	return found, nil
}

// removeFinalizer removes our finalizer and the public lifecycle manager's:
// that operator no longer runs on a switched KCP, so its finalizers would
// hold the Manifest forever.
func (r *Reconciler) removeFinalizer(ctx context.Context, mf *v1beta2.Manifest) error {
	if err := finalizer.Remove(ctx, r.KCP, mf, append(shared.PublicManifestFinalizers(), shared.ManifestFinalizer)...); err != nil {
		return err
	}
	r.held.drop(keyOf(mf))
	return nil
}

func joinErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
