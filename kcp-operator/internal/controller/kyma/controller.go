package kyma

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/conditionboard"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// Field owners of this controller's writes.
const (
	// FieldOwner owns Manifests and the objects in runtimes.
	FieldOwner = "lifecycle-manager"
	// StatusOwner owns the parts of Kyma status this controller writes.
	StatusOwner = "lifecycle-manager-kyma"
)

// Reconciler reconciles KCP Kymas.
type Reconciler struct {
	// Guard, set in a sharded operator, runs reconciles only while this
	// shard holds the Kyma (internal/shard).
	Guard    shard.Wrapper
	KCP      client.Client
	Runtimes *remote.Cache
	Resolver *resolve.Resolver
	Events   events.EventRecorder
	Metrics  *Metrics
	Requeue  schedule.Requeue
	// Cleanups run in the runtime when a Kyma is deleted, before the
	// runtime Kyma and the CRDs go.
	Cleanups []RuntimeCleanup
	// Required are the conditions of other controllers that must exist and
	// be true for the Kyma to be Ready (ModuleCatalog, SKRWebhook).
	Required []string
	// Board carries those conditions from their controllers to this one's
	// status write.
	Board *conditionboard.Board
	// Sources are further event sources, e.g. the push path's events.
	Sources []source.Source
	// Pushed measures the push path's last hop; nil without the push path.
	Pushed *push.Tracker
	// Fresh holds the runtime writes pushed events reported, which a
	// reconcile must read past; Recheck is when to look again at one it
	// could not see. Nil without the push path.
	Fresh   *push.Waits
	Recheck time.Duration
	// RequeueNoPush bounds the resync of a Kyma whose agent is not ready:
	// without the push path, only polling sees changes in its runtime.
	RequeueNoPush time.Duration
	Maintenance   *Maintenance // holds upgrades that require downtime until the maintenance window; nil holds none

	applied appliedSpecs
}

// Reconcile brings one Kyma and its runtime to the desired state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bk := push.Bookkeeping{Tracker: r.Pushed, Waits: r.Fresh, Recheck: r.Recheck, Observe: r.Metrics.reconciled}
	return bk.Reconcile(ctx, req, r.reconcileKyma)
}

// reconcileKyma reads the Kyma and reconciles it or its deletion.
func (r *Reconciler) reconcileKyma(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &v1beta2.Kyma{}
	if err := r.KCP.Get(ctx, req.NamespacedName, kyma); err != nil {
		push.FromContext(ctx).Skip()
		if apierrors.IsNotFound(err) {
			r.Metrics.forget(req.Namespace, req.Name)
			r.Board.Forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading Kyma %s: %w", req.NamespacedName, err)
	}
	// The label pauses reconciliation, not deletion: a Kyma users delete
	// goes, its runtime cleaned, as with the public lifecycle manager.
	if kyma.SkipsReconciliation() && kyma.DeletionTimestamp.IsZero() {
		push.FromContext(ctx).Skip()
		log.FromContext(ctx).V(1).Info("skipping: the Kyma carries " + shared.SkipReconciliationLabel)
		return ctrl.Result{}, nil
	}
	if kyma.DeletionTimestamp.IsZero() {
		return r.reconcile(ctx, kyma)
	}
	return r.reconcileDeletion(ctx, kyma)
}

func (r *Reconciler) reconcile(ctx context.Context, kyma *v1beta2.Kyma) (ctrl.Result, error) {
	if err := r.ensureFinalizerAndLabel(ctx, kyma); err != nil {
		return schedule.OnConflict(err)
	}
	rt, err := r.Runtimes.For(ctx, kyma)
	var remoteKyma *v1beta2.Kyma
	if err == nil {
		remoteKyma, err = r.syncRuntime(ctx, kyma, rt)
	}
	if apierrors.IsConflict(err) {
		return schedule.OnConflict(err)
	}
	if err != nil {
		return r.runtimeFailed(ctx, kyma, rt, err)
	}
	modules, err := r.syncModules(ctx, kyma)
	if err != nil {
		return ctrl.Result{}, err
	}
	status := r.statusToWrite(kyma, modules)
	if err := r.writeStatus(ctx, kyma, status); err != nil {
		return ctrl.Result{}, err
	}
	if err := mirrorStatus(ctx, rt, remoteKyma, status); err != nil {
		return r.runtimeFailed(ctx, kyma, rt, err)
	}
	return r.recheck(kyma, status), nil
}

// recheck is when the Kyma is read again without news. What a Kyma
// waits for while Processing comes as news: its Manifests by their watch,
// the catalog and the agent by the Board, runtime changes by push (or
// withoutPush's polling). The one change without news is the held
// progress (statusToWrite) turning writable once the stored status is
// older than the busy recheck's bound (12 × --requeue-busy), so a
// Processing Kyma is rechecked then, not
// every --requeue-busy: that polling was 4 of the 6.5 reconciles of each
// new Kyma at 1,000 Kymas, each reading the runtime Kyma for nothing.
func (r *Reconciler) recheck(kyma *v1beta2.Kyma, status v1beta2.KymaStatus) ctrl.Result {
	unchanged := time.Since(status.LastOperation.LastUpdateTime.Time)
	res := r.Requeue.AfterUnchanged(status.State, unchanged)
	if status.State == shared.StateProcessing && unchanged < r.Requeue.BusyMax {
		res.RequeueAfter = max(res.RequeueAfter, r.Requeue.BusyMax-unchanged)
	}
	return r.withoutPush(kyma, res)
}

// withoutPush shortens the resync while the Kyma's agent is not ready.
func (r *Reconciler) withoutPush(kyma *v1beta2.Kyma, res ctrl.Result) ctrl.Result {
	if r.RequeueNoPush <= 0 || !slices.Contains(r.Required, v1beta2.ConditionSKRWebhook) {
		return res
	}
	if c := r.Board.Find(kyma, v1beta2.ConditionSKRWebhook); c != nil && c.Status == metav1.ConditionTrue {
		return res
	}
	if res.RequeueAfter == 0 || res.RequeueAfter > r.RequeueNoPush {
		res.RequeueAfter = r.RequeueNoPush
	}
	return res
}

// runtimeFailed records that the runtime could not be reached or changed,
// drops a broken client and tries again after the error interval.
func (r *Reconciler) runtimeFailed(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, cause error) (ctrl.Result, error) {
	if rt != nil && r.Runtimes.Forget(rt, cause) {
		log.FromContext(ctx).Info("dropped the runtime client", "reason", cause.Error())
	}
	r.warnRefused(kyma, cause)
	status := *kyma.Status.DeepCopy()
	status.Conditions, _ = r.Board.Merged(kyma)
	status.State = shared.StateError
	setCondition(&status, kyma.Generation, v1beta2.ConditionRuntime, false, remote.ConditionReason(cause, "Unreachable"), cause.Error())
	status.LastOperation = lastOperation("runtime: " + cause.Error())
	if err := r.writeStatus(ctx, kyma, status); err != nil {
		return ctrl.Result{}, err
	}
	if remote.Refused(cause) {
		// The same Secret is refused again: its change (watched) or a Kyma
		// change brings the next try, no timer.
		return ctrl.Result{}, nil
	}
	return r.Requeue.After(shared.StateError), nil
}

// ensureFinalizerAndLabel adds the finalizer and the managed-by label, and
// on a new Kyma the last-synced spec, in one write.
func (r *Reconciler) ensureFinalizerAndLabel(ctx context.Context, kyma *v1beta2.Kyma) error {
	_, synced := kyma.Annotations[shared.LastSyncedSpecAnnotation]
	if synced && controllerutil.ContainsFinalizer(kyma, shared.KymaFinalizer) && kyma.Labels[shared.ManagedByLabel] == shared.OperatorName {
		return nil
	}
	return finalizer.Patch(ctx, r.KCP, kyma, func() {
		controllerutil.AddFinalizer(kyma, shared.KymaFinalizer)
		if kyma.Labels == nil {
			kyma.Labels = map[string]string{}
		}
		kyma.Labels[shared.ManagedByLabel] = shared.OperatorName
		if !synced {
			// A new Kyma starts from its own spec: the runtime Kyma is made
			// from it. One that exists already and differs still wins, as it
			// would without the annotation; syncSpec then writes it again.
			metav1.SetMetaDataAnnotation(&kyma.ObjectMeta, shared.LastSyncedSpecAnnotation, specHash(kyma.Spec))
		}
	})
}
