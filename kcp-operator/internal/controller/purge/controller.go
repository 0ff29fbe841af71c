package purge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// Reconciler purges Kymas stuck in deletion.
type Reconciler struct {
	// Guard, set in a sharded operator, runs reconciles only while this
	// shard holds the Kyma (internal/shard).
	Guard    shard.Wrapper
	KCP      client.Client
	Runtimes *remote.Cache
	Events   events.EventRecorder
	Metrics  *Metrics
	// Grace is how long a deletion may take before it is purged.
	Grace time.Duration
	// Cleanups remove what other parts placed in runtimes (the agent).
	Cleanups []kymactrl.RuntimeCleanup
	// Removal says what of a module may be deleted (internal/removal): the
	// same rules as the Manifest controller's, so that a purge deletes no
	// user data either.
	Removal removal.Rules
}

// ownFinalizers are the finalizers the operator puts on Kymas and Manifests,
// and the public lifecycle manager's on the Manifests it created before a
// KCP switched over: nobody else removes those any more.
func ownFinalizers() []string {
	return append(shared.PublicManifestFinalizers(), shared.KymaFinalizer, shared.ManifestFinalizer, shared.PurgeFinalizer)
}

// Reconcile purges the Kyma once its deletion is older than the grace period.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &v1beta2.Kyma{}
	if err := r.KCP.Get(ctx, req.NamespacedName, kyma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// skip-reconciliation does not exempt a Kyma: a deletion stuck past
	// the grace period is purged all the same.
	if kyma.DeletionTimestamp.IsZero() || !hasOwnFinalizer(kyma) {
		return ctrl.Result{}, nil
	}
	if wait := time.Until(kyma.DeletionTimestamp.Add(r.Grace)); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	runtimeNote, err := r.purge(ctx, kyma)
	if apierrors.IsConflict(err) {
		return schedule.OnConflict(err)
	}
	if err != nil {
		r.Metrics.purged("failed")
		return ctrl.Result{}, err
	}
	r.Metrics.purged("purged")
	r.Events.Eventf(kyma, nil, corev1.EventTypeWarning, "Purged", "Purge",
		"deletion did not finish within %s; purged (%s)", r.Grace, runtimeNote)
	return ctrl.Result{}, nil
}

// purge cleans the runtime where it can, then drops the finalizers. It
// returns what happened in the runtime, for the Event.
func (r *Reconciler) purge(ctx context.Context, kyma *v1beta2.Kyma) (string, error) {
	var manifests v1beta2.ManifestList
	if err := r.KCP.List(ctx, &manifests, index.OfKyma(kyma)...); err != nil {
		return "", fmt.Errorf("listing the Manifests of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	note := "runtime cleaned up"
	kept, err := r.cleanRuntime(ctx, kyma, manifests.Items)
	if len(kept) > 0 {
		note += "; kept " + strings.Join(kept, "; ")
	}
	if err != nil {
		// The purge exists for exactly this case: the KCP side goes anyway.
		note = "runtime not cleaned up: " + err.Error()
		log.FromContext(ctx).Info("purging without cleaning the runtime", "reason", err.Error())
	}
	for i := range manifests.Items {
		if err := r.dropFinalizers(ctx, &manifests.Items[i]); err != nil {
			return "", err
		}
	}
	if err := r.dropFinalizers(ctx, kyma); err != nil {
		return "", err
	}
	return note, nil
}

// cleanRuntime removes what the Manifests installed and what the Kyma
// placed, and names what the removal rules kept.
func (r *Reconciler) cleanRuntime(ctx context.Context, kyma *v1beta2.Kyma, manifests []v1beta2.Manifest) ([]string, error) {
	rt, err := r.Runtimes.For(ctx, kyma)
	if err != nil {
		return nil, err
	}
	var (
		errs []error
		kept []string
	)
	for i := range manifests {
		k, err := r.removeModuleResources(ctx, rt, &manifests[i])
		kept = append(kept, k...)
		errs = append(errs, err)
	}
	errs = append(errs, kymactrl.CleanupRuntime(ctx, kyma, rt, r.Cleanups))
	err = errors.Join(errs...)
	if err != nil {
		r.Runtimes.Forget(rt, err)
	}
	return kept, err
}

// removeModuleResources deletes what a Manifest installed: its default CR
// (when the operator created it), then the synced objects as the removal
// rules allow. It returns what they kept.
func (r *Reconciler) removeModuleResources(ctx context.Context, rt *remote.Runtime, mf *v1beta2.Manifest) ([]string, error) {
	module := removal.ModuleOf(mf, rt, rt.Namespace)
	var errs []error
	if module.OwnCR != nil {
		err := rt.Delete(ctx, module.OwnCR, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !meta.IsNoMatchError(err) && client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting the module CR %s/%s: %w", module.OwnCR.GetNamespace(), module.OwnCR.GetName(), err))
		}
	}
	kept, err := r.Removal.Delete(ctx, rt, module, mf.Status.Synced)
	names := make([]string, 0, len(kept))
	for _, k := range kept {
		names = append(names, k.String())
	}
	return names, errors.Join(append(errs, err)...)
}

func hasOwnFinalizer(obj client.Object) bool {
	return slices.ContainsFunc(obj.GetFinalizers(), func(f string) bool { return slices.Contains(ownFinalizers(), f) })
}

func (r *Reconciler) dropFinalizers(ctx context.Context, obj client.Object) error {
	if !hasOwnFinalizer(obj) {
		return nil
	}
	return finalizer.Remove(ctx, r.KCP, obj, ownFinalizers()...)
}

// SetupWithManager registers the controller; it sees only Kymas in deletion.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("purge").
		For(&v1beta2.Kyma{}).
		WithEventFilter(deleting{}).
		WithOptions(opts).
		Complete(r.Guard.Wrap(r))
	if err != nil {
		return fmt.Errorf("setting up the purge controller: %w", err)
	}
	return nil
}

// Metrics of the purge controller.
type Metrics struct {
	purges *prometheus.CounterVec
}

// NewMetrics registers the purge metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{purges: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lifecycle_manager_kyma_purges_total",
		Help: "Kymas purged after their deletion exceeded the grace period, by result.",
	}, []string{"result"})}
	if err := reg.Register(m.purges); err != nil {
		return nil, fmt.Errorf("registering purge metrics: %w", err)
	}
	return m, nil
}

func (m *Metrics) purged(result string) {
	if m != nil {
		m.purges.WithLabelValues(result).Inc()
	}
}
