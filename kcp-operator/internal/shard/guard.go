package shard

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// claimWait is how long a reconcile of a Kyma not claimed yet waits.
const claimWait = time.Second

// Wrapper wraps a controller's reconciler; nil wraps nothing.
type Wrapper func(reconcile.Reconciler) reconcile.Reconciler

// Wrap returns r wrapped by w.
func (w Wrapper) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	if w == nil {
		return r
	}
	return w(r)
}

// Guard lets reconciles of a Kyma's objects run only while this shard
// holds the Kyma (Fence).
type Guard struct {
	Shard string
	Fence *Fence
	// Cache holds this shard's Kymas and Manifests; APIReader reads
	// around it.
	Cache     client.Reader
	APIReader client.Reader
}

// Kymas guards a reconciler whose requests name Kymas.
func (g *Guard) Kymas(next reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		return g.run(ctx, req, req.NamespacedName, true, next)
	})
}

// Manifests guards a reconciler whose requests name Manifests.
func (g *Guard) Manifests(next reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		var mf v1beta2.Manifest
		if err := g.Cache.Get(ctx, req.NamespacedName, &mf); err != nil {
			if apierrors.IsNotFound(err) {
				return next.Reconcile(ctx, req) // gone: the reconciler only forgets it
			}
			return ctrl.Result{}, fmt.Errorf("reading Manifest %s: %w", req.NamespacedName, err)
		}
		kyma := types.NamespacedName{Namespace: mf.Namespace, Name: mf.Labels[shared.KymaNameLabel]}
		return g.run(ctx, req, kyma, false, next)
	})
}

// run passes req to next while kyma is held, claiming it first when its
// owner annotation already names this shard (after a restart). A Kyma
// not in the cache is another shard's, or gone: a Kyma request passes
// (the reconciler finds nothing and forgets it), a Manifest request passes
// only when its Kyma is gone from the KCP, so that its removal finishes.
func (g *Guard) run(ctx context.Context, req ctrl.Request, kyma types.NamespacedName, passUnknown bool, next reconcile.Reconciler) (ctrl.Result, error) {
	if g.Fence.Enter(kyma) {
		defer g.Fence.Exit(kyma)
		return next.Reconcile(ctx, req)
	}
	var k v1beta2.Kyma
	err := g.Cache.Get(ctx, kyma, &k)
	switch {
	case err == nil && k.Annotations[shared.ShardOwnerAnnotation] == g.Shard:
		g.Fence.Resume(kyma)
		if g.Fence.Enter(kyma) {
			defer g.Fence.Exit(kyma)
			return next.Reconcile(ctx, req)
		}
		return ctrl.Result{RequeueAfter: claimWait}, nil
	case err == nil:
		return ctrl.Result{RequeueAfter: claimWait}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("reading Kyma %s: %w", kyma, err)
	case passUnknown:
		return next.Reconcile(ctx, req)
	}
	gone, err := g.kymaGone(ctx, kyma)
	if err != nil || !gone {
		return ctrl.Result{}, err
	}
	return next.Reconcile(ctx, req)
}

func (g *Guard) kymaGone(ctx context.Context, kyma types.NamespacedName) (bool, error) {
	m := kymaMeta()
	err := g.APIReader.Get(ctx, kyma, m)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading Kyma %s: %w", kyma, err)
	}
	return false, nil
}

// kymaMeta is an empty metadata-only Kyma.
func kymaMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(v1beta2.GroupVersion.WithKind("Kyma"))
	return m
}

// kymaMetaList is an empty metadata-only list of Kymas.
func kymaMetaList() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(v1beta2.GroupVersion.WithKind("KymaList"))
	return l
}
