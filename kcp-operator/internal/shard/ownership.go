package shard

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// ReasonClaimed is the reason of the Event on a Kyma a shard took over.
const ReasonClaimed = "ShardClaimed"

// releaseRetry is how soon a release looks again at a Kyma whose
// reconciles still run.
const releaseRetry = 100 * time.Millisecond

// Ownership claims the Kymas labelled for this shard and lets go of the
// ones relabelled away. Its requests name Kymas; its cache holds this
// shard's.
type Ownership struct {
	Shard string
	Fence *Fence
	// KCP reads from the shard's cache and writes; APIReader reads around
	// the cache.
	KCP       client.Client
	APIReader client.Reader
	// LeaseNamespace holds the shards' Leases, named by LeaseOf.
	LeaseNamespace string
	LeaseOf        func(shard string) string
	// OwnerWait is how soon a Kyma whose old shard still holds its Lease
	// is looked at again.
	OwnerWait time.Duration
	Events    events.EventRecorder
	Now       func() time.Time
}

// Reconcile claims or lets go of one Kyma.
func (o *Ownership) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kyma := &v1beta2.Kyma{}
	err := o.KCP.Get(ctx, req.NamespacedName, kyma)
	if apierrors.IsNotFound(err) || err == nil && kyma.Labels[shared.ShardLabel] != o.Shard {
		return o.release(ctx, req.NamespacedName)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Kyma %s: %w", req.NamespacedName, err)
	}
	return o.claim(ctx, kyma)
}

// claim takes kyma over once no other shard may still write its objects:
// its Manifests and Secrets get this shard's label, then the owner
// annotation names this shard, then its reconciles may run.
func (o *Ownership) claim(ctx context.Context, kyma *v1beta2.Kyma) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(kyma)
	owner := kyma.Annotations[shared.ShardOwnerAnnotation]
	if owner == o.Shard && o.Fence.IsOpen(key) {
		return ctrl.Result{}, nil
	}
	if owner != o.Shard {
		// "" is the unsharded instance's: it writes every Kyma while it runs.
		held, err := leaseHeld(ctx, o.APIReader, client.ObjectKey{Namespace: o.LeaseNamespace, Name: o.LeaseOf(owner)}, o.Now())
		if err != nil {
			return ctrl.Result{}, err
		}
		if held {
			log.FromContext(ctx).V(1).Info("waiting for the old shard to let go", "owner", describe(owner))
			return ctrl.Result{RequeueAfter: o.OwnerWait}, nil
		}
	}
	// The Kyma controller persists its finalizer before it creates a
	// Manifest: a Kyma without it has none, and was taken over from no
	// one. The owner patch's optimistic lock holds that to the version
	// read here.
	reconciled := controllerutil.ContainsFinalizer(kyma, shared.KymaFinalizer)
	if err := o.adopt(ctx, kyma, reconciled); err != nil {
		return ctrl.Result{}, err
	}
	if owner != o.Shard {
		patch := client.MergeFromWithOptions(kyma.DeepCopy(), client.MergeFromWithOptimisticLock{})
		metav1.SetMetaDataAnnotation(&kyma.ObjectMeta, shared.ShardOwnerAnnotation, o.Shard)
		if err := o.KCP.Patch(ctx, kyma, patch); err != nil {
			return conflictOrError(fmt.Errorf("claiming Kyma %s: %w", key, err))
		}
		if reconciled {
			o.Events.Eventf(kyma, nil, corev1.EventTypeNormal, ReasonClaimed, "ClaimShard", "shard %s took the Kyma over from %s", o.Shard, describe(owner))
		}
	}
	o.Fence.Open(key)
	return ctrl.Result{}, nil
}

// adopt labels the Kyma's Secrets, and its Manifests when it has been
// reconciled, for this shard, so that its caches hold them.
func (o *Ownership) adopt(ctx context.Context, kyma *v1beta2.Kyma, reconciled bool) error {
	kinds := []string{"Secret"}
	if reconciled {
		kinds = append(kinds, "Manifest")
	}
	for _, kind := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		gv := v1beta2.GroupVersion
		if kind == "Secret" {
			gv = corev1.SchemeGroupVersion
		}
		list.SetGroupVersionKind(gv.WithKind(kind + "List"))
		if err := o.APIReader.List(ctx, list, client.InNamespace(kyma.Namespace), client.MatchingLabels{shared.KymaNameLabel: kyma.Name}); err != nil {
			return fmt.Errorf("listing the %ss of Kyma %s/%s: %w", kind, kyma.Namespace, kyma.Name, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if obj.Labels[shared.ShardLabel] == o.Shard {
				continue
			}
			obj.SetGroupVersionKind(gv.WithKind(kind))
			patch := client.MergeFrom(obj.DeepCopy())
			metav1.SetMetaDataLabel(&obj.ObjectMeta, shared.ShardLabel, o.Shard)
			if err := o.KCP.Patch(ctx, obj, patch); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("labelling %s %s/%s for shard %s: %w", kind, obj.Namespace, obj.Name, o.Shard, err)
			}
		}
	}
	return nil
}

// release lets go of a Kyma this shard no longer holds: once none of its
// reconciles runs, the owner annotation is removed so that the new shard
// may claim it. Nothing is cleaned up.
func (o *Ownership) release(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
	if !o.Fence.Close(key) {
		return ctrl.Result{RequeueAfter: releaseRetry}, nil
	}
	kyma := kymaMeta()
	if err := o.APIReader.Get(ctx, key, kyma); err != nil {
		if apierrors.IsNotFound(err) {
			o.Fence.Forget(key)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading Kyma %s: %w", key, err)
	}
	if err := o.letGo(ctx, kyma); err != nil {
		return conflictOrError(err)
	}
	return ctrl.Result{}, nil
}

// letGo removes this shard's owner annotation from a Kyma labelled for
// another shard.
func (o *Ownership) letGo(ctx context.Context, kyma *metav1.PartialObjectMetadata) error {
	if kyma.Annotations[shared.ShardOwnerAnnotation] != o.Shard || kyma.Labels[shared.ShardLabel] == o.Shard {
		return nil
	}
	patch := client.MergeFromWithOptions(kyma.DeepCopy(), client.MergeFromWithOptimisticLock{})
	delete(kyma.Annotations, shared.ShardOwnerAnnotation)
	if err := o.KCP.Patch(ctx, kyma, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("letting go of Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	log.FromContext(ctx).Info("let go of the Kyma", "kyma", kyma.Namespace+"/"+kyma.Name, "to", kyma.Labels[shared.ShardLabel])
	return nil
}

func describe(shard string) string {
	if shard == "" {
		return "the unsharded instance"
	}
	return "shard " + shard
}

func conflictOrError(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: releaseRetry}, nil
	}
	return ctrl.Result{}, err
}
