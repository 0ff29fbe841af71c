package watcher

import (
	"context"
	"fmt"

	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/v1beta2"
)

// SetupWithManager registers the controller: Watchers, their
// VirtualServices, and Gateways (a Gateway change re-routes every Watcher
// of its namespace). In direct mode it watches Watchers alone, and needs
// no Istio CRD.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("watcher").
		For(&v1beta2.Watcher{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(opts)
	if !r.Direct {
		b = b.Owns(&networkingv1.VirtualService{}).
			Watches(&networkingv1.Gateway{}, handler.EnqueueRequestsFromMapFunc(r.watchersOfNamespace))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the Watcher controller: %w", err)
	}
	if r.Direct {
		return nil
	}
	if err := mgr.Add(r); err != nil {
		return fmt.Errorf("adding the event Gateway keeper: %w", err)
	}
	return nil
}

func (r *Reconciler) watchersOfNamespace(ctx context.Context, gw client.Object) []reconcile.Request {
	var list v1beta2.WatcherList
	if err := r.KCP.List(ctx, &list, client.InNamespace(gw.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot list the Watchers for a Gateway change")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, w := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&w)})
	}
	return out
}
