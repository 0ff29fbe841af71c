package shard

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
)

// Assigner gives each Kyma its shard; it runs in the coordinator.
type Assigner struct {
	Shard string
	// KCP writes; Kymas holds the metadata of every Kyma; Lists holds the
	// shard list ConfigMap ListKey.
	KCP     client.Client
	Kymas   client.Reader
	Lists   client.Reader
	ListKey client.ObjectKey
}

// Reconcile labels one Kyma for its shard when it has none, when its
// shard left the list, or when the coordinator assigned it and the list
// now ranks another shard first. A label set by hand pins the Kyma.
func (a *Assigner) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	shards, err := List(ctx, a.Lists, a.ListKey)
	if err != nil || !IsCoordinator(a.Shard, shards) {
		return ctrl.Result{}, err
	}
	kyma := kymaMeta()
	if err := a.Kymas.Get(ctx, req.NamespacedName, kyma); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	target := target(kyma, shards)
	if target == "" {
		return ctrl.Result{}, nil
	}
	from := kyma.Labels[shared.ShardLabel]
	patch := client.MergeFromWithOptions(kyma.DeepCopy(), client.MergeFromWithOptimisticLock{})
	metav1.SetMetaDataLabel(&kyma.ObjectMeta, shared.ShardLabel, target)
	metav1.SetMetaDataAnnotation(&kyma.ObjectMeta, shared.ShardAssignedAnnotation, target)
	if err := a.KCP.Patch(ctx, kyma, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return conflictOrError(fmt.Errorf("assigning Kyma %s to shard %s: %w", req.NamespacedName, target, err))
	}
	log.FromContext(ctx).Info("assigned the Kyma", "shard", target, "from", from)
	return ctrl.Result{}, nil
}

// target is the shard kyma moves to, or "" when it stays.
func target(kyma *metav1.PartialObjectMetadata, shards []string) string {
	label := kyma.Labels[shared.ShardLabel]
	want := Assign(runtimeID(kyma), shards)
	switch {
	case label == "" || !slices.Contains(shards, label):
		return want
	case !kyma.DeletionTimestamp.IsZero():
		return "" // its shard finishes the deletion
	case label == kyma.Annotations[shared.ShardAssignedAnnotation] && label != want:
		return want
	}
	return ""
}

// runtimeID is what a Kyma is hashed by: its runtime ID, else its name.
func runtimeID(kyma *metav1.PartialObjectMetadata) string {
	if id := kyma.Labels[shared.RuntimeIDLabel]; id != "" {
		return id
	}
	return kyma.Name
}

// allKymas maps a change of the shard list to every Kyma.
func (a *Assigner) allKymas(ctx context.Context, _ client.Object) []reconcile.Request {
	list := kymaMetaList()
	if err := a.Kymas.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "listing the Kymas after a change of the shard list")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, k := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&k)})
	}
	return out
}
