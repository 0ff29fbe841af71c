package manifest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// StatusOwner owns the Manifest status.
const StatusOwner = "lifecycle-manager-manifest"

// Reconciler reconciles Manifests.
type Reconciler struct {
	// Guard, set in a sharded operator, runs reconciles only while this
	// shard holds the Kyma (internal/shard).
	Guard shard.Wrapper
	// KCP is the manager's client: reads come from its cache.
	KCP client.Client
	// APIReader reads from the API server what the cache may show late;
	// nil reads through KCP.
	APIReader client.Reader
	Runtimes  *remote.Cache
	Source    Source
	Events    events.EventRecorder
	Metrics   *Metrics
	Requeue   schedule.Requeue
	// Parallelism bounds the objects applied or checked at once per Manifest.
	Parallelism int
	// Removal says what prune and deletion may delete (internal/removal).
	Removal removal.Rules
	// AdoptFrom are managed-by values and field managers whose objects a
	// module takes over as its own (see ownership.go).
	AdoptFrom []string
	// Sources are further event sources: the push path's drift events.
	Sources []source.Source
	// Fresh holds the runtime writes pushed drift events reported, which a
	// reconcile must read past; Recheck is when to look again at one it
	// could not see. Nil without the push path.
	Fresh   *push.Waits
	Recheck time.Duration
	// Policy refuses rendered content before anything is applied; nil
	// refuses nothing.
	Policy *contentpolicy.Policy

	held heldStatuses
}

// Reconcile installs the module of one Manifest and reports its state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return push.Bookkeeping{Waits: r.Fresh, Recheck: r.Recheck}.Reconcile(ctx, req, r.reconcile)
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mf, err := r.read(ctx, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.held.drop(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.held.restore(mf)
	if mf.SkipsReconciliation() {
		log.FromContext(ctx).V(1).Info("skipping: the Manifest carries " + shared.SkipReconciliationLabel)
		return ctrl.Result{}, nil
	}
	if !mf.DeletionTimestamp.IsZero() {
		return r.reconcileDeletion(ctx, mf)
	}
	if !mf.Spec.Remote {
		// The CRD refuses remote: false; a Manifest stored before that
		// rule is refused here, with nothing applied anywhere.
		return r.finish(ctx, mf, failed(mf, v1beta2.ConditionInstallation, ReasonControlPlaneTarget, errControlPlaneTarget))
	}
	if err := r.ensureFinalizer(ctx, mf); err != nil {
		return schedule.OnConflict(err)
	}
	rt, err := r.runtime(ctx, mf)
	if err != nil {
		return r.finish(ctx, mf, failed(mf, v1beta2.ConditionInstallation, remote.ConditionReason(err, "RuntimeUnreachable"), err))
	}
	obs, err := r.install(ctx, mf, rt)
	if err != nil {
		r.Runtimes.Forget(rt, err)
	}
	return r.finish(ctx, mf, obs)
}

// read returns the Manifest from the cache or, once it is being deleted,
// from the API server. The cache may not hold yet the status the last
// reconcile wrote, and a deletion step that read an older status would
// delete the objects of an older record, or none, and let the Manifest go
// with the module's objects left in the runtime.
func (r *Reconciler) read(ctx context.Context, key types.NamespacedName) (*v1beta2.Manifest, error) {
	mf := &v1beta2.Manifest{}
	if err := r.KCP.Get(ctx, key, mf); err != nil || mf.DeletionTimestamp.IsZero() {
		return mf, err
	}
	live := r.APIReader
	if live == nil {
		live = r.KCP
	}
	if err := live.Get(ctx, key, mf); err != nil {
		return nil, fmt.Errorf("reading Manifest %s from the API server: %w", key, err)
	}
	return mf, nil
}

// finish writes the observation and requeues by state. A module under way
// is rechecked before new work until its status has stayed the same for
// the busy recheck's bound, 12 × --requeue-busy (see schedule.UnderWay): one that stays Processing for
// longer must not hold up the Manifests created after it, and it is read
// less often the longer its status stays the same.
func (r *Reconciler) finish(ctx context.Context, mf *v1beta2.Manifest, obs observation) (ctrl.Result, error) {
	unchanged := unchangedFor(mf, obs)
	if err := r.writeStatus(ctx, mf, obs); err != nil {
		return ctrl.Result{}, err
	}
	return r.Requeue.AfterUnchanged(obs.state, unchanged), nil
}

// unchangedFor is how long the Manifest's state and message have been what
// obs finds them; zero when obs changes them.
func unchangedFor(mf *v1beta2.Manifest, obs observation) time.Duration {
	if mf.Status.State != obs.state || mf.Status.LastOperation.Operation != obs.message {
		return 0
	}
	return time.Since(mf.Status.LastOperation.LastUpdateTime.Time)
}

// runtime returns the client of the runtime the Manifest installs into.
func (r *Reconciler) runtime(ctx context.Context, mf *v1beta2.Manifest) (*remote.Runtime, error) {
	name := mf.Labels[shared.KymaNameLabel]
	if name == "" {
		return nil, fmt.Errorf("the Manifest has no %s label", shared.KymaNameLabel)
	}
	kyma := &v1beta2.Kyma{}
	if err := r.KCP.Get(ctx, client.ObjectKey{Namespace: mf.Namespace, Name: name}, kyma); err != nil {
		return nil, fmt.Errorf("reading Kyma %s: %w", name, err)
	}
	return r.Runtimes.For(ctx, kyma)
}

// ensureFinalizer puts our finalizer on mf. A Manifest that the public
// lifecycle manager created carries that operator's finalizers, which
// nobody removes once this operator runs the KCP: it is replaced by ours in
// the same patch, so that our deletion path owns the Manifest's end.
func (r *Reconciler) ensureFinalizer(ctx context.Context, mf *v1beta2.Manifest) error {
	public := shared.HasPublicManifestFinalizer(mf.Finalizers)
	if controllerutil.ContainsFinalizer(mf, shared.ManifestFinalizer) && !public {
		return nil
	}
	err := finalizer.Patch(ctx, r.KCP, mf, func() {
		for _, f := range shared.PublicManifestFinalizers() {
			controllerutil.RemoveFinalizer(mf, f)
		}
		controllerutil.AddFinalizer(mf, shared.ManifestFinalizer)
	})
	if err == nil && public {
		log.FromContext(ctx).Info("took over the Manifest from the public lifecycle manager", "finalizers", shared.PublicManifestFinalizers())
	}
	return err
}

// namespacedIn answers scope questions from the runtime's REST mapper.
func namespacedIn(rt *remote.Runtime) func(schema.GroupVersionKind) (bool, error) {
	return func(gvk schema.GroupVersionKind) (bool, error) {
		m, err := rt.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, fmt.Errorf("the runtime does not know %s: %w", gvk, err)
		}
		return m.Scope.Name() == "namespace", nil
	}
}

func (r *Reconciler) event(mf *v1beta2.Manifest, warning bool, reason, msg string) {
	kind := corev1.EventTypeNormal
	if warning {
		kind = corev1.EventTypeWarning
	}
	r.Events.Eventf(mf, nil, kind, reason, "Reconcile", "%s", msg)
}
