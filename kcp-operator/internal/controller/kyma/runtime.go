package kyma

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimeprep"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// syncRuntime makes sure the runtime has our CRDs, its namespace and its
// Kyma, and that both Kymas agree on modules and channel. It returns the
// runtime Kyma as it read or wrote it, for mirrorStatus.
func (r *Reconciler) syncRuntime(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) (*v1beta2.Kyma, error) {
	if err := runtimeprep.Ensure(ctx, rt); err != nil {
		return nil, err
	}
	remoteKyma, err := r.ensureRuntimeKyma(ctx, kyma, rt)
	if err != nil {
		return nil, err
	}
	return remoteKyma, r.syncSpec(ctx, kyma, rt, remoteKyma)
}

// ensureRuntimeKyma returns the runtime Kyma, creating it from the KCP Kyma
// when it is missing, and keeps the labels users and the agent need on it.
func (r *Reconciler) ensureRuntimeKyma(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime) (*v1beta2.Kyma, error) {
	key := client.ObjectKey{Namespace: rt.Namespace, Name: shared.DefaultRuntimeKymaName}
	remoteKyma, err := readRuntimeKyma(ctx, rt, key)
	switch {
	case apierrors.IsNotFound(err):
		remoteKyma = &v1beta2.Kyma{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: runtimeLabels(kyma)},
			Spec:       v1beta2.KymaSpec{Channel: kyma.Spec.Channel, Modules: kyma.Spec.Modules},
		}
		if err := rt.Create(ctx, remoteKyma); err != nil {
			return nil, fmt.Errorf("creating Kyma %s in the runtime: %w", key, err)
		}
		return remoteKyma, nil
	case err != nil:
		return nil, fmt.Errorf("reading Kyma %s in the runtime: %w", key, err)
	}
	want := runtimeLabels(kyma)
	missing := false
	for k, v := range want {
		if remoteKyma.Labels[k] != v {
			missing = true
		}
	}
	if missing {
		patch := client.MergeFrom(remoteKyma.DeepCopy())
		if remoteKyma.Labels == nil {
			remoteKyma.Labels = map[string]string{}
		}
		maps.Copy(remoteKyma.Labels, want)
		if err := rt.Patch(ctx, remoteKyma, patch); err != nil {
			return nil, fmt.Errorf("labelling Kyma %s in the runtime: %w", key, err)
		}
	}
	return remoteKyma, nil
}

// runtimeKyma names the runtime Kyma for the pushed writes a reconcile waits for.
var runtimeKyma = v1beta2.GroupVersion.WithKind("Kyma").GroupKind()

// readRuntimeKyma reads the runtime Kyma past the writes pushed events
// reported, so that an edit the agent saw is not missed because the
// runtime's API server had not stored it yet.
func readRuntimeKyma(ctx context.Context, rt *remote.Runtime, key client.ObjectKey) (*v1beta2.Kyma, error) {
	var remoteKyma *v1beta2.Kyma
	var notFound error
	err := push.FromContext(ctx).Read(ctx, push.Object{GroupKind: runtimeKyma, NamespacedName: key},
		func(ctx context.Context) (string, error) {
			remoteKyma, notFound = &v1beta2.Kyma{}, nil
			err := rt.Get(ctx, key, remoteKyma)
			if apierrors.IsNotFound(err) {
				notFound = err // deleted after the write: nothing to wait for
				return "", nil
			}
			return remoteKyma.ResourceVersion, err
		})
	if err != nil {
		return nil, err
	}
	return remoteKyma, notFound
}

// runtimeLabels are the labels the runtime Kyma carries: the watched-by
// label routes its changes to us through the agent; the account labels
// tell the runtime's users and modules which BTP accounts it belongs to.
// A label the KCP Kyma lacks is left as the runtime has it, as the public
// lifecycle manager does: the runtime's own labels are not ours to remove.
func runtimeLabels(kyma *v1beta2.Kyma) map[string]string {
	labels := map[string]string{
		shared.ManagedByLabel: shared.OperatorName,
		shared.WatchedByLabel: shared.WatchedByKymaValue,
	}
	for _, k := range []string{shared.RuntimeIDLabel, shared.BetaLabel, shared.InternalLabel,
		shared.GlobalAccountIDLabel, shared.SubAccountIDLabel} {
		if v, ok := kyma.Labels[k]; ok {
			labels[k] = v
		}
	}
	return labels
}

// syncSpec keeps modules and channel equal on both sides. It knows which
// side changed from the hash both last agreed on; when both changed, the
// runtime wins, because runtime admins own their modules.
func (r *Reconciler) syncSpec(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, remoteKyma *v1beta2.Kyma) error {
	kcpHash, runtimeHash := specHash(kyma.Spec), specHash(remoteKyma.Spec)
	last := kyma.Annotations[shared.LastSyncedSpecAnnotation]
	// Both patches carry the version they were made from: an edit on
	// either side between our read and our write then conflicts and the
	// next reconcile decides again, instead of being overwritten.
	patch := client.MergeFromWithOptions(kyma.DeepCopy(), client.MergeFromWithOptimisticLock{})
	switch {
	case kcpHash == runtimeHash:
		if last == kcpHash {
			return nil
		}
	case runtimeHash != last:
		kyma.Spec.Channel, kyma.Spec.Modules = remoteKyma.Spec.Channel, remoteKyma.Spec.Modules
		r.Events.Eventf(kyma, nil, corev1.EventTypeNormal, "SpecSynced", "SyncFromRuntime",
			"modules and channel taken from the runtime Kyma")
	default:
		remotePatch := client.MergeFromWithOptions(remoteKyma.DeepCopy(), client.MergeFromWithOptimisticLock{})
		remoteKyma.Spec.Channel, remoteKyma.Spec.Modules = kyma.Spec.Channel, kyma.Spec.Modules
		if err := rt.Patch(ctx, remoteKyma, remotePatch); err != nil {
			return fmt.Errorf("writing modules and channel to the runtime Kyma: %w", err)
		}
	}
	if kyma.Annotations == nil {
		kyma.Annotations = map[string]string{}
	}
	kyma.Annotations[shared.LastSyncedSpecAnnotation] = specHash(kyma.Spec)
	if err := r.KCP.Patch(ctx, kyma, patch); err != nil {
		return fmt.Errorf("recording the synced spec on Kyma %s/%s: %w", kyma.Namespace, kyma.Name, err)
	}
	return nil
}

// specHash hashes what the two Kymas share: channel and modules.
func specHash(spec v1beta2.KymaSpec) string {
	shared := struct {
		Channel string           `json:"channel"`
		Modules []v1beta2.Module `json:"modules"`
	}{spec.Channel, spec.Modules}
	return hashJSON(shared)
}

func hashJSON(v any) string { return runtimewrite.Hash(v) }
