package kyma

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
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

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// IndexKymaModules indexes Kymas by every name that can tie them to a
// template: listed module names and the templates, modules and component
// names their status recorded.
const IndexKymaModules = "kyma.modules"

// IndexKymas registers the Kyma index on the manager's cache.
func IndexKymas(ctx context.Context, fi client.FieldIndexer) error {
	return index.Add(ctx, fi, index.Field{Obj: &v1beta2.Kyma{}, Name: IndexKymaModules, Fn: kymaModuleKeys})
}

func kymaModuleKeys(o client.Object) []string {
	k := o.(*v1beta2.Kyma)
	keys := map[string]struct{}{}
	for _, m := range k.Spec.Modules {
		keys[m.Name] = struct{}{}
	}
	for _, s := range k.Status.Modules {
		keys[s.Name] = struct{}{}
		if s.FQDN != "" {
			keys[s.FQDN] = struct{}{}
		}
		if s.Template != nil {
			keys[s.Template.Name] = struct{}{}
		}
	}
	out := make([]string, 0, len(keys))
	for key := range keys {
		out = append(out, key)
	}
	return out
}

// Settle is how long the Kyma controller lets news of a Kyma's parts —
// its Manifests' changes, the catalog and agent reports of work done —
// gather before it reconciles the Kyma: the parts of a new Kyma finish
// within moments of each other, and a reconcile for each step of each
// wrote the Kyma's status five times or more. A report of a problem is taken
// up at once.
const Settle = 2 * time.Second

// SetupWithManager registers the controller. pacer paces how a template or
// release meta change re-enqueues the Kymas using it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options, pacer *schedule.Pacer) error {
	users := &Users{Reader: mgr.GetClient(), Pacer: pacer}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("kyma").
		For(&v1beta2.Kyma{}, builder.WithPredicates(kymaChanged())).
		Watches(&v1beta2.Manifest{}, schedule.Settled(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(),
			&v1beta2.Kyma{}, handler.OnlyControllerOwner()), Settle), builder.WithPredicates(manifestChanged())).
		Watches(&v1beta2.ModuleTemplate{}, users.handler(TemplateKeys), builder.WithPredicates(specOrLabelsChanged())).
		Watches(&v1beta2.ModuleReleaseMeta{}, users.handler(ReleaseMetaKeys), builder.WithPredicates(specOrLabelsChanged())).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(schedule.KymaOfSecret(schedule.AccessSecret)))
	for _, s := range r.Sources {
		b = b.WatchesRawSource(s)
	}
	if err := b.WithOptions(opts).Complete(r.Guard.Wrap(r)); err != nil {
		return fmt.Errorf("setting up the Kyma controller: %w", err)
	}
	return nil
}

// Users finds the Kymas that use a template or release meta.
type Users struct {
	Reader client.Reader
	Pacer  *schedule.Pacer
}

// KeysFunc returns the names a Kyma may use for obj, and whether obj is
// mandatory (then every Kyma uses it).
type KeysFunc func(obj client.Object) (keys []string, mandatory bool)

// TemplateKeys are the names a Kyma may use for a template.
func TemplateKeys(o client.Object) ([]string, bool) {
	t, ok := o.(*v1beta2.ModuleTemplate)
	if !ok {
		return nil, false
	}
	return []string{resolve.ModuleName(t), t.Name, t.Namespace + "/" + t.Name, resolve.ComponentName(t)}, t.Spec.Mandatory
}

// ReleaseMetaKeys are the names a Kyma may use for a release meta.
func ReleaseMetaKeys(o client.Object) ([]string, bool) {
	m, ok := o.(*v1beta2.ModuleReleaseMeta)
	if !ok {
		return nil, false
	}
	return []string{m.Spec.ModuleName, m.Spec.OcmComponentName}, m.Spec.Mandatory != nil
}

// Of returns the Kymas that use obj.
func (u *Users) Of(ctx context.Context, obj client.Object, keys KeysFunc) ([]types.NamespacedName, error) {
	names, mandatory := keys(obj)
	found := map[types.NamespacedName]struct{}{}
	lists := []client.MatchingFields{}
	if mandatory {
		lists = append(lists, nil)
	} else {
		for _, n := range names {
			if n != "" && n != "/" {
				lists = append(lists, client.MatchingFields{IndexKymaModules: n})
			}
		}
	}
	for _, fields := range lists {
		var kymas v1beta2.KymaList
		opts := []client.ListOption{client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy}
		if fields != nil {
			opts = append(opts, fields)
		}
		if err := u.Reader.List(ctx, &kymas, opts...); err != nil {
			return nil, fmt.Errorf("listing the Kymas that use %s: %w", obj.GetName(), err)
		}
		for _, k := range kymas.Items {
			found[types.NamespacedName{Namespace: k.Namespace, Name: k.Name}] = struct{}{}
		}
	}
	out := make([]types.NamespacedName, 0, len(found))
	for key := range maps.Keys(found) {
		out = append(out, key)
	}
	return out, nil
}

// handler enqueues the users of the changed object (old and new state) at
// the times Pacer gives them, so that a release does not reconcile every
// Kyma at once.
func (u *Users) handler(keys KeysFunc) handler.EventHandler {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, obj := range objs {
			kymas, err := u.Of(ctx, obj, keys)
			if err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "cannot enqueue the users of a changed object")
				continue
			}
			schedule.AddPaced(q, u.Pacer, kymas)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// kymaChanged lets through what the Kyma controller must react to, and not
// its own status writes. The conditions of other controllers come through
// the Board's source.
func kymaChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*v1beta2.Kyma), e.ObjectNew.(*v1beta2.Kyma)
		return o.Generation != n.Generation ||
			!maps.Equal(withoutOurs(o.Labels), withoutOurs(n.Labels)) ||
			o.Annotations[shared.SyncNamespaceAnnotation] != n.Annotations[shared.SyncNamespaceAnnotation] ||
			o.Annotations[AllowDowngradeAnnotation] != n.Annotations[AllowDowngradeAnnotation] ||
			!o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	}}
}

// manifestChanged lets through the Manifest changes that change what the
// Kyma says of the module: its state, and the message of a module in
// trouble. The message of a module still being installed changes with each
// step; it reaches the Kyma with the Kyma's next write (at the latest its
// --requeue-busy recheck), not with a reconcile and a write per step.
func manifestChanged() predicate.Predicate {
	return predicate.Funcs{
		// The Kyma controller creates its Manifests itself; their creation
		// tells it nothing it does not know.
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*v1beta2.Manifest), e.ObjectNew.(*v1beta2.Manifest)
			if o.Generation != n.Generation || !o.DeletionTimestamp.Equal(n.DeletionTimestamp) {
				return true
			}
			state := shownState(n)
			return shownState(o) != state ||
				(state != shared.StateProcessing && o.Status.LastOperation.Operation != n.Status.LastOperation.Operation)
		},
	}
}

// shownState is the state the Kyma shows for an installed module of mf.
func shownState(mf *v1beta2.Manifest) shared.State {
	if mf.Status.State == "" || !observed(mf) {
		return shared.StateProcessing
	}
	return mf.Status.State
}

// specOrLabelsChanged lets through the template and release-meta changes
// that can change what a Kyma resolves, not those found at the start.
func specOrLabelsChanged() predicate.Predicate {
	return schedule.Changes(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))
}

// withoutOurs drops the label the Kyma controller itself puts on a Kyma
// when it takes it over: that write must not reconcile the Kyma once more.
func withoutOurs(labels map[string]string) map[string]string {
	if _, ok := labels[shared.ManagedByLabel]; !ok {
		return labels
	}
	out := maps.Clone(labels)
	delete(out, shared.ManagedByLabel)
	return out
}
