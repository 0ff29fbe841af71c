package skrwebhook

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// SetupWithManager registers the controller. A Watcher change re-renders
// the agent of every runtime at pacer's pace; a changed certificate Secret
// of a Kyma re-syncs that runtime at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options, pacer *schedule.Pacer) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("skrwebhook").
		For(&v1beta2.Kyma{}, builder.WithPredicates(schedule.TakenOverKymas())).
		Watches(&v1beta2.Watcher{}, schedule.AllKymas(mgr.GetClient(), pacer),
			builder.WithPredicates(schedule.Changes(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(schedule.KymaOfSecret(schedule.CertificateSecret)))
	for _, s := range r.Sources {
		b = b.WatchesRawSource(s)
	}
	if err := b.WithOptions(opts).Complete(r.Guard.Wrap(r)); err != nil {
		return fmt.Errorf("setting up the SKR webhook controller: %w", err)
	}
	return nil
}
