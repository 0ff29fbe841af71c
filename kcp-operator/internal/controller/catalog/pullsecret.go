package catalog

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/pullsecret"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// PullSecret is the image pull Secret the catalog controller keeps in
// every runtime. It rides on the catalog's reconcile: both go to every
// taken-over Kyma's runtime, and a change of either fans out to all Kymas.
type PullSecret struct {
	Copier *pullsecret.Copier
	// Cache watches the KCP Secret (Copier.Source) alone.
	Cache cache.Cache
}

// sync copies the Secret; a nil PullSecret does nothing.
func (p *PullSecret) sync(ctx context.Context, rt *remote.Runtime) error {
	if p == nil {
		return nil
	}
	return p.Copier.Sync(ctx, rt)
}

func (r *Reconciler) reportPullSecret(kyma *v1beta2.Kyma, err error) {
	if r.PullSecret == nil {
		return
	}
	r.Board.Report(kyma, pullsecret.ConditionOf(err))
}

// retryPullSecret says whether a failed copy needs a retry: a missing
// source does not, its creation enqueues every Kyma.
func retryPullSecret(err error) bool {
	return err != nil && !errors.Is(err, pullsecret.ErrSourceMissing)
}

// source enqueues every Kyma, at pacer's pace, when the KCP Secret is
// created, changed or deleted; the Secrets of all watched namespaces' Kymas
// are copies of it.
func (p *PullSecret) source(kcp client.Reader, pacer *schedule.Pacer) source.Source {
	everyKyma := handler.Funcs{
		CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueEveryKyma(ctx, kcp, pacer, q)
		},
		UpdateFunc: func(ctx context.Context, _ event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueEveryKyma(ctx, kcp, pacer, q)
		},
		DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueueEveryKyma(ctx, kcp, pacer, q)
		},
	}
	changed := predicate.Funcs{
		// Kymas reconcile at the start anyway.
		CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
		},
	}
	return source.Kind[client.Object](p.Cache, &corev1.Secret{}, everyKyma, changed)
}

func enqueueEveryKyma(ctx context.Context, kcp client.Reader, pacer *schedule.Pacer, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var list v1beta2.KymaList
	if err := kcp.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot enqueue the Kymas for a change of the image pull Secret")
		return
	}
	keys := make([]types.NamespacedName, len(list.Items))
	for i, k := range list.Items {
		keys[i] = types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
	}
	schedule.AddPaced(q, pacer, keys)
}
