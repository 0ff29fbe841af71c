package schedule

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// AllKymas enqueues every Kyma of the changed object's namespace (of all
// namespaces for cluster-wide kinds), each at the time pacer gives it.
func AllKymas(reader client.Reader, pacer *Pacer) handler.EventHandler {
	return &allKymas{reader: reader, pacer: pacer}
}

type allKymas struct {
	reader client.Reader
	pacer  *Pacer
}

func (a *allKymas) enqueue(ctx context.Context, obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var list v1beta2.KymaList
	if err := a.reader.List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot enqueue the Kymas for a change", "object", obj.GetName())
		return
	}
	keys := make([]types.NamespacedName, len(list.Items))
	for i, k := range list.Items {
		keys[i] = types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
	}
	AddPaced(q, a.pacer, keys)
}

// Changes lets through the events p lets through, except the creations
// an informer reports for the objects it finds when it starts: at the
// operator's start every Kyma is reconciled by each controller's own watch
// of Kymas, so fanning the templates, release metas and Watchers that
// already existed out to them again only repeats that work, in the
// background: at 10,000 Kymas it was a third of the Kyma and agent
// reconciles of a new fleet and still ran after all were Ready.
func Changes(p predicate.Predicate) predicate.Predicate {
	return predicate.And(p, predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList }})
}

// AddPaced adds keys to q as background work, each at the time pacer gives
// it; without a pacer, at once.
func AddPaced(q workqueue.TypedRateLimitingInterface[reconcile.Request], pacer *Pacer, keys []types.NamespacedName) {
	pacer.Enqueue(q, keys)
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

// SecretKind tells a Kyma's Secrets apart by the purpose label: its access
// Secret (the runtime's kubeconfig) has none, its certificate has one.
type SecretKind int

const (
	// AccessSecret is the kubeconfig of the Kyma's runtime.
	AccessSecret SecretKind = iota
	// CertificateSecret is the certificate of the Kyma's agent.
	CertificateSecret
)

// KymaOfSecret maps a Secret of the given kind labelled with a Kyma's name
// to that Kyma. Each controller watches only the kind it reads: the
// certificate issuer writes a Secret for every Kyma when it starts, and
// those writes must not reorder the Kyma controller's queue.
func KymaOfSecret(kind SecretKind) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		name, ok := o.GetLabels()[shared.KymaNameLabel]
		hasPurpose := o.GetLabels()[shared.PurposeLabel] != ""
		if !ok || hasPurpose != (kind == CertificateSecret) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	}
}

// Background adds req to q after the delay with handler.LowPriority where
// q supports priorities: fan-out after a template, release or Watcher
// change is background work that must not hold up pushed changes or new
// Kymas.
func Background(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, after time.Duration) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{After: after, Priority: ptr.To(handler.LowPriority)}, req)
		return
	}
	q.AddAfter(req, after)
}
