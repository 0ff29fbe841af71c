package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/catalog"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimebase"
)

// StatusOwner owns the ModuleCatalog condition.
const StatusOwner = "lifecycle-manager-catalog"

// Reconciler syncs the catalog of one Kyma's runtime.
type Reconciler struct {
	KCP      client.Client
	Runtimes *remote.Cache
	// Resync is how often an unchanged catalog is checked again.
	Resync time.Duration
	// Retry is the wait after a failed sync.
	Retry time.Duration
}

// Reconcile syncs the catalog and writes the ModuleCatalog condition.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &v1beta2.Kyma{}
	if err := r.KCP.Get(ctx, req.NamespacedName, kyma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if kyma.SkipsReconciliation() || !kyma.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the Kyma controller removes the catalog with the Kyma
	}
	res, err := r.sync(ctx, kyma)
	cond := metav1.Condition{Type: v1beta2.ConditionModuleCatalog, Status: metav1.ConditionTrue, Reason: "Synced",
		Message: fmt.Sprintf("%d ModuleTemplates and %d ModuleReleaseMetas in sync", res.Templates, res.ReleaseMetas)}
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "SyncWarning", err.Error()
	}
	if werr := r.writeCondition(ctx, kyma, cond); werr != nil {
		return ctrl.Result{}, werr
	}
	if err != nil {
		// The failure is in the condition; a fixed retry instead of the
		// growing per-item backoff keeps a runtime that was down briefly
		// from waiting minutes for its catalog.
		return ctrl.Result{RequeueAfter: r.Retry}, nil //nolint:nilerr // reported in the ModuleCatalog condition
	}
	return ctrl.Result{RequeueAfter: r.Resync}, nil
}

func (r *Reconciler) sync(ctx context.Context, kyma *v1beta2.Kyma) (catalog.Result, error) {
	rt, err := r.Runtimes.For(ctx, kyma)
	if err != nil {
		return catalog.Result{}, err
	}
	if err := runtimebase.Ensure(ctx, rt); err != nil {
		r.Runtimes.Forget(rt, err)
		return catalog.Result{}, err
	}
	res, err := catalog.Sync(ctx, r.KCP, kyma, rt)
	if err != nil {
		r.Runtimes.Forget(rt, err)
	}
	return res, err
}

// writeCondition applies the ModuleCatalog condition when it changed, so
// that an idle catalog causes no writes.
func (r *Reconciler) writeCondition(ctx context.Context, kyma *v1beta2.Kyma, cond metav1.Condition) error {
	cur := meta.FindStatusCondition(kyma.Status.Conditions, cond.Type)
	if cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason && cur.Message == cond.Message {
		return nil
	}
	cond.ObservedGeneration = kyma.Generation
	cond.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
	if cur != nil && cur.Status == cond.Status {
		cond.LastTransitionTime = cur.LastTransitionTime
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": cond.Type, "status": string(cond.Status), "reason": cond.Reason, "message": cond.Message,
		"observedGeneration": cond.ObservedGeneration, "lastTransitionTime": cond.LastTransitionTime.UTC().Format(time.RFC3339),
	}}}}}
	u.SetAPIVersion(v1beta2.GroupVersion.String())
	u.SetKind(v1beta2.KymaKind)
	u.SetNamespace(kyma.Namespace)
	u.SetName(kyma.Name)
	if err := r.KCP.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(StatusOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the ModuleCatalog condition of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	return nil
}

// SetupWithManager registers the controller. A template or release meta
// change re-enqueues every Kyma of its namespace within spread.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options, spread time.Duration) error {
	everyKyma := &allKymas{reader: mgr.GetClient(), spread: spread}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("catalog").
		For(&v1beta2.Kyma{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1beta2.ModuleTemplate{}, everyKyma, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1beta2.ModuleReleaseMeta{}, everyKyma, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(opts).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the catalog controller: %w", err)
	}
	return nil
}

// allKymas enqueues every Kyma of the changed object's namespace, spread out.
type allKymas struct {
	reader client.Reader
	spread time.Duration
}

var _ handler.EventHandler = &allKymas{}

func (a *allKymas) enqueue(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var list v1beta2.KymaList
	if err := a.reader.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot enqueue the Kymas for a catalog change")
		return
	}
	for _, k := range list.Items {
		var d time.Duration
		if a.spread > 0 {
			d = time.Duration(rand.Int64N(int64(a.spread))) //nolint:gosec // spreading load needs no secure randomness
		}
		q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: k.Namespace, Name: k.Name}}, d)
	}
}

// Create implements handler.EventHandler.
func (a *allKymas) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	a.enqueue(ctx, e.Object, q)
}

// Update implements handler.EventHandler.
func (a *allKymas) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	a.enqueue(ctx, e.ObjectNew, q)
}

// Delete implements handler.EventHandler.
func (a *allKymas) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	a.enqueue(ctx, e.Object, q)
}

// Generic implements handler.EventHandler.
func (a *allKymas) Generic(context.Context, event.GenericEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}
