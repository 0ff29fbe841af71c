package catalog

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/catalog"
	"github.com/lifecycle-manager/kcp-operator/internal/conditionboard"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimeprep"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// Reconciler syncs the catalog of one Kyma's runtime.
type Reconciler struct {
	// Guard, set in a sharded operator, runs reconciles only while this
	// shard holds the Kyma (internal/shard).
	Guard    shard.Wrapper
	KCP      client.Client
	Runtimes *remote.Cache
	// Resync is how often an unchanged catalog is checked again.
	Resync time.Duration
	// Retry is the wait after a failed sync.
	Retry time.Duration
	// Board takes the ModuleCatalog condition to the Kyma controller.
	Board *conditionboard.Board
	// PullSecret, when set, copies the image pull Secret into the runtime
	// with the catalog (pullsecret.go).
	PullSecret *PullSecret
}

// Reconcile syncs the catalog and reports the ModuleCatalog condition.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &v1beta2.Kyma{}
	if err := r.KCP.Get(ctx, req.NamespacedName, kyma); err != nil {
		if apierrors.IsNotFound(err) {
			r.Board.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if kyma.SkipsReconciliation() || !kyma.DeletionTimestamp.IsZero() || !schedule.TakenOver(kyma) {
		// The Kyma controller removes the catalog with the Kyma; a Kyma it
		// has not taken over yet comes back when it has.
		return ctrl.Result{}, nil
	}
	res, pullErr, err := r.sync(ctx, kyma)
	r.reportPullSecret(kyma, pullErr)
	// The message does not count the catalog: a new template would then
	// rewrite the status of every Kyma, and reconcile every Kyma again.
	cond := metav1.Condition{Type: v1beta2.ConditionModuleCatalog, Status: metav1.ConditionTrue, Reason: "Synced",
		Message: "the runtime's module catalog matches the KCP"}
	if res.Applied+res.Removed > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("module catalog synced", "applied", res.Applied, "removed", res.Removed,
			"templates", res.Templates, "releaseMetas", res.ReleaseMetas)
	}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, remote.ConditionReason(err, "SyncWarning"), err.Error()
	}
	r.Board.Report(kyma, cond)
	if err != nil || retryPullSecret(pullErr) {
		// The failure is in the condition; a fixed retry instead of the
		// growing per-item backoff keeps a runtime that was down briefly
		// from waiting minutes for its catalog.
		return ctrl.Result{RequeueAfter: r.Retry}, nil //nolint:nilerr // reported in the ModuleCatalog condition
	}
	return ctrl.Result{RequeueAfter: r.Resync}, nil
}

// sync syncs the catalog and, when configured, the image pull Secret; the
// second error is the pull Secret's.
func (r *Reconciler) sync(ctx context.Context, kyma *v1beta2.Kyma) (catalog.Result, error, error) {
	rt, err := r.Runtimes.For(ctx, kyma)
	if err != nil {
		return catalog.Result{}, err, err
	}
	if err := runtimeprep.Ensure(ctx, rt); err != nil {
		r.Runtimes.Forget(rt, err)
		return catalog.Result{}, err, err
	}
	pullErr := r.PullSecret.sync(ctx, rt)
	res, err := catalog.Sync(ctx, r.KCP, kyma, rt)
	if err != nil {
		r.Runtimes.Forget(rt, err)
		return res, pullErr, err
	}
	return res, pullErr, r.undoIfDeleted(ctx, kyma, rt)
}

// undoIfDeleted removes the catalog again when kyma began its deletion
// while the sync ran: the Kyma controller's cleanup may have removed the
// catalog before the sync's last write. The read is from the cache the
// Kyma controller saw the deletion in, so a cleanup that ran before the
// sync ended is seen here.
func (r *Reconciler) undoIfDeleted(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) error {
	now := &v1beta2.Kyma{}
	err := r.KCP.Get(ctx, client.ObjectKeyFromObject(kyma), now)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading Kyma %s/%s after the catalog sync: %w", kyma.Namespace, kyma.Name, err)
	}
	if err == nil && now.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := catalog.Remove(ctx, rt); err != nil {
		return fmt.Errorf("removing the catalog of Kyma %s/%s, deleted during its sync: %w", kyma.Namespace, kyma.Name, err)
	}
	return nil
}

// SetupWithManager registers the controller. A template or release meta
// change re-enqueues every Kyma of its namespace at pacer's pace, a change
// of the image pull Secret every Kyma.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options, pacer *schedule.Pacer) error {
	everyKyma := schedule.AllKymas(mgr.GetClient(), pacer)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("catalog").
		For(&v1beta2.Kyma{}, builder.WithPredicates(schedule.TakenOverKymas())).
		Watches(&v1beta2.ModuleTemplate{}, everyKyma,
			builder.WithPredicates(schedule.Changes(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})))).
		Watches(&v1beta2.ModuleReleaseMeta{}, everyKyma, builder.WithPredicates(schedule.Changes(predicate.GenerationChangedPredicate{})))
	if r.PullSecret != nil {
		b = b.WatchesRawSource(r.PullSecret.source(mgr.GetClient(), pacer))
	}
	err := b.WithOptions(opts).Complete(r.Guard.Wrap(r))
	if err != nil {
		return fmt.Errorf("setting up the catalog controller: %w", err)
	}
	return nil
}
