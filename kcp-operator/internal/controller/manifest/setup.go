package manifest

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// SetupWithManager registers the controller. Its own status and
// annotation writes do not enqueue a Manifest again.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("manifest").
		For(&v1beta2.Manifest{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, releaseChanged{}, publicFinalizer{})))
	for _, s := range r.Sources {
		b = b.WatchesRawSource(s)
	}
	if err := b.WithOptions(opts).Complete(r.Guard.Wrap(r)); err != nil {
		return fmt.Errorf("setting up the Manifest controller: %w", err)
	}
	return nil
}

// releaseChanged passes updates that set the unmanaged annotation or start deletion.
type releaseChanged struct{ predicate.Funcs }

func (releaseChanged) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetAnnotations()[shared.UnmanagedAnnotation] != e.ObjectNew.GetAnnotations()[shared.UnmanagedAnnotation] ||
		!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
}

// publicFinalizer passes updates that leave a public lifecycle manager's
// finalizer on a Manifest (that operator, or a restore from a backup, put
// it there), so that it is taken over without waiting for the resync.
type publicFinalizer struct{ predicate.Funcs }

func (publicFinalizer) Update(e event.UpdateEvent) bool {
	return shared.HasPublicManifestFinalizer(e.ObjectNew.GetFinalizers())
}

// Metrics of the Manifest controller.
type Metrics struct {
	applies prometheus.Counter
	objects prometheus.Counter
}

// NewMetrics registers the Manifest metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		applies: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lifecycle_manager_manifest_applies_total",
			Help: "Manifests applied to their runtime because their content changed or drifted.",
		}),
		objects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lifecycle_manager_manifest_objects_applied_total",
			Help: "Objects applied to runtimes by server-side apply.",
		}),
	}
	for _, c := range []prometheus.Collector{m.applies, m.objects} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering Manifest metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) applied(objects int) {
	if m != nil {
		m.applies.Inc()
		m.objects.Add(float64(objects))
	}
}
