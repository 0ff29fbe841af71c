package kyma

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/catalog"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimeprep"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// RuntimeCleanup removes what another part of the operator placed in a
// runtime (the agent, its certificates) when the Kyma goes.
type RuntimeCleanup func(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) error

// reconcileDeletion marks the runtime Kyma Deleting, deletes the Manifests
// and waits for them, then removes everything the operator placed in the
// runtime, the runtime Kyma among the last, then the finalizer. An
// unreachable runtime keeps the Kyma in deletion, retried with backoff,
// until the Purge controller ends the wait; a runtime whose access Secret
// is gone is not waited for at all (deleteWithoutRuntime).
func (r *Reconciler) reconcileDeletion(ctx context.Context, kyma *v1beta2.Kyma) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(kyma, shared.KymaFinalizer) {
		return ctrl.Result{}, nil
	}
	if kyma.Status.State != shared.StateDeleting {
		r.Events.Eventf(kyma, nil, corev1.EventTypeNormal, "Deleting", "Delete", "deleting modules and runtime resources")
	}
	rt, err := r.Runtimes.For(ctx, kyma)
	gone, gerr := r.accessSecretGone(ctx, kyma, err)
	if gerr != nil {
		return ctrl.Result{}, gerr
	}
	if gone {
		return r.deleteWithoutRuntime(ctx, kyma)
	}
	if err == nil {
		// Before any module goes, so that its operator sees the Kyma
		// leave, not only its module. A runtime that refuses the mark
		// keeps the modules; one that does not answer cannot remove them
		// either, and its Manifests are deleted all the same, so that the
		// purge finds them in deletion: the mark is tried again on every
		// pass until the cleanup.
		markErr := markRuntimeDeleting(ctx, kyma, rt)
		if answered(markErr) {
			return r.deletionFailed(ctx, kyma, rt, "cannot mark the runtime Kyma Deleting", markErr)
		}
		if markErr != nil {
			log.FromContext(ctx).Info("could not mark the runtime Kyma Deleting", "reason", markErr.Error())
		}
	}
	remaining, merr := r.deleteManifests(ctx, kyma)
	if merr != nil {
		return ctrl.Result{}, merr
	}
	if len(remaining) > 0 {
		status := deletingStatus(kyma, "waiting for Manifests to be deleted: "+strings.Join(remaining, ", "))
		unchanged := time.Since(status.LastOperation.LastUpdateTime.Time)
		return r.Requeue.AfterUnchanged(shared.StateDeleting, unchanged), r.writeStatus(ctx, kyma, status)
	}
	if err == nil {
		err = r.cleanupRuntime(ctx, kyma, rt)
	}
	if err != nil {
		return r.deletionFailed(ctx, kyma, rt, "cannot clean up the runtime", err)
	}
	if err := finalizer.Remove(ctx, r.KCP, kyma, shared.KymaFinalizer); err != nil {
		return schedule.OnConflict(err)
	}
	r.Metrics.forget(kyma.Namespace, kyma.Name)
	return ctrl.Result{}, nil
}

// deletionFailed records that the runtime could not be reached or changed
// during the deletion, and tries again with backoff.
func (r *Reconciler) deletionFailed(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, what string, err error) (ctrl.Result, error) {
	r.Runtimes.Forget(rt, err)
	r.warnRefused(kyma, err)
	status := deletingStatus(kyma, what+": "+err.Error())
	setCondition(&status, kyma.Generation, v1beta2.ConditionRuntime, false, remote.ConditionReason(err, "Unreachable"), err.Error())
	if werr := r.writeStatus(ctx, kyma, status); werr != nil {
		return ctrl.Result{}, werr
	}
	if remote.Refused(err) {
		return ctrl.Result{}, nil // as in runtimeFailed: the Secret's change brings the next try
	}
	return ctrl.Result{}, fmt.Errorf("deleting Kyma %s/%s: %s: %w", kyma.Namespace, kyma.Name, what, err)
}

// answered reports whether err is an answer of the runtime's API server (a
// refusal, a conflict), not a failure to reach it.
func answered(err error) bool {
	var status apierrors.APIStatus
	return err != nil && errors.As(err, &status)
}

// accessSecretGone reports whether the runtime cannot be reached because
// no Secret for kyma exists any more, as opposed to a Secret that is
// ambiguous, lacks the key or points at a runtime that does not answer:
// those may be fixed, a deleted Secret means the runtime was let go.
func (r *Reconciler) accessSecretGone(ctx context.Context, kyma *v1beta2.Kyma, runtimeErr error) (bool, error) {
	if !errors.Is(runtimeErr, remote.ErrNoKubeconfig) {
		return false, nil
	}
	// Any Secret labelled for the Kyma counts: one without the key or a
	// second one is a mistake to fix, not a runtime let go.
	var secrets corev1.SecretList
	if err := r.KCP.List(ctx, &secrets, append(index.OfKyma(kyma), client.UnsafeDisableDeepCopy)...); err != nil {
		return false, fmt.Errorf("listing the access Secrets of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	return len(secrets.Items) == 0, nil
}

// deleteWithoutRuntime finishes the deletion of a Kyma whose runtime has no
// access Secret: nothing can clean the runtime, so waiting would only keep
// the Kyma and its Manifests until the purge. The Manifests go with our
// finalizers (and the public operator's) removed.
func (r *Reconciler) deleteWithoutRuntime(ctx context.Context, kyma *v1beta2.Kyma) (ctrl.Result, error) {
	manifests, err := r.manifestsOf(ctx, kyma)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, mf := range manifests {
		if err := r.removeManifest(ctx, mf, false); err != nil {
			return ctrl.Result{}, err
		}
		if err := finalizer.Remove(ctx, r.KCP, mf, append(shared.PublicManifestFinalizers(), shared.ManifestFinalizer)...); err != nil {
			return schedule.OnConflict(err)
		}
	}
	if err := finalizer.Remove(ctx, r.KCP, kyma, shared.KymaFinalizer); err != nil {
		return schedule.OnConflict(err)
	}
	log.FromContext(ctx).Info("deleted without cleaning the runtime: its access Secret is gone", "manifests", len(manifests))
	r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, ReasonRuntimeNotCleaned, "Delete",
		"the runtime was not cleaned up: its access Secret is gone; %d Manifests deleted without it", len(manifests))
	r.Metrics.forget(kyma.Namespace, kyma.Name)
	return ctrl.Result{}, nil
}

// ReasonRuntimeNotCleaned is the Event reason of a Kyma deleted without
// cleaning its runtime, whose access Secret was gone.
const ReasonRuntimeNotCleaned = "RuntimeNotCleaned"

func deletingStatus(kyma *v1beta2.Kyma, msg string) v1beta2.KymaStatus {
	status := *kyma.Status.DeepCopy()
	status.State = shared.StateDeleting
	status.LastOperation = keepOrNew(kyma.Status.LastOperation, msg)
	return status
}

// deleteManifests deletes every Manifest of kyma and returns the names of
// those still present.
func (r *Reconciler) deleteManifests(ctx context.Context, kyma *v1beta2.Kyma) ([]string, error) {
	manifests, err := r.manifestsOf(ctx, kyma)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(manifests))
	for name, mf := range manifests {
		if err := r.removeManifest(ctx, mf, false); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

func (r *Reconciler) cleanupRuntime(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) error {
	return CleanupRuntime(ctx, kyma, rt, r.Cleanups)
}

// CleanupRuntime removes the runtime Kyma, the catalog, what the cleanups
// registered by other parts placed there, and our CRDs unless other Kymas
// still use them (runtimes may share an API server).
func CleanupRuntime(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, cleanups []RuntimeCleanup) error {
	for _, cleanup := range cleanups {
		if err := cleanup(ctx, kyma, rt); err != nil {
			return err
		}
	}
	remoteKyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: rt.Namespace, Name: shared.DefaultRuntimeKymaName}}
	if err := rt.Delete(ctx, remoteKyma); ignoreGone(err) != nil {
		return fmt.Errorf("deleting the runtime Kyma: %w", err)
	}
	if err := catalog.Remove(ctx, rt); err != nil {
		return err
	}
	return removeCRDsIfUnused(ctx, rt)
}

func removeCRDsIfUnused(ctx context.Context, rt *remote.Runtime) error {
	var others v1beta2.KymaList
	if err := rt.List(ctx, &others, client.Limit(1)); ignoreGone(err) != nil {
		return fmt.Errorf("listing Kymas left in the runtime: %w", err)
	}
	if len(others.Items) > 0 {
		return nil
	}
	crds, err := crd.ByKind(runtimeprep.CRDKinds...)
	if err != nil {
		return err
	}
	for _, c := range crds {
		obj := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}
		if err := rt.Delete(ctx, obj); ignoreGone(err) != nil {
			return fmt.Errorf("deleting CRD %s in the runtime: %w", c.Name, err)
		}
	}
	rt.Facts.Forget("crds")
	return nil
}

// ignoreGone treats objects and kinds that no longer exist as deleted.
// ignoreGoneWith is ignoreGone with what failed named.
func ignoreGoneWith(err error, what string) error {
	if err := ignoreGone(err); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func ignoreGone(err error) error {
	if meta.IsNoMatchError(err) {
		return nil
	}
	return client.IgnoreNotFound(err)
}
