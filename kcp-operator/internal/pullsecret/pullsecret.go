// Package pullsecret copies the image pull Secret that
// --skr-image-pull-secret names from the KCP into every runtime namespace,
// under its own name, so that module workloads (render.Request.PullSecret)
// and the agent can pull from private registries. The copy is the
// operator's: one that differs from the KCP's is replaced whole. A memo per
// runtime makes an unchanged Secret cost no request while the runtime
// client lives; a changed one (rotated credentials) is written again.
package pullsecret

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// Condition is the Kyma condition that reports the copy, with the public
// operator's type name.
const Condition = "SKRImagePullSecretSync"

// Condition reasons.
const (
	ReasonSynced = "Synced"
	// ReasonSourceMissing: the KCP Secret does not exist. Workloads still
	// reference the name; the copy already in the runtime is kept.
	ReasonSourceMissing = "SourceSecretMissingError"
	// ReasonSyncFailed: the runtime did not take the copy.
	ReasonSyncFailed = "SyncWarning"
)

// ErrSourceMissing says the KCP Secret does not exist.
var ErrSourceMissing = errors.New("image pull Secret not found in the KCP")

// Copier copies one KCP Secret into runtimes.
type Copier struct {
	// Source is the KCP Secret.
	Source types.NamespacedName
	// Reader reads Source (a cache that watches it).
	Reader client.Reader
}

// Sync makes the runtime's copy equal to the KCP Secret.
func (c *Copier) Sync(ctx context.Context, rt *remote.Runtime) error {
	src := &corev1.Secret{}
	if err := c.Reader.Get(ctx, c.Source, src); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: %s", ErrSourceMissing, c.Source)
		}
		return fmt.Errorf("reading the image pull Secret %s: %w", c.Source, err)
	}
	hash := runtimewrite.Hash([]any{src.Type, src.Data})
	memo := "pullsecret/" + rt.Namespace + "/" + c.Source.Name
	if rt.Facts.Recall(memo) == hash {
		return nil
	}
	if err := c.write(ctx, rt, src, hash); err != nil {
		rt.Facts.Forget(memo)
		return err
	}
	rt.Facts.Remember(memo, hash)
	return nil
}

func (c *Copier) write(ctx context.Context, rt *remote.Runtime, src *corev1.Secret, hash string) error {
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: c.Source.Name, Namespace: rt.Namespace,
			Labels:      map[string]string{shared.ManagedByLabel: shared.OperatorName},
			Annotations: map[string]string{shared.SpecHashAnnotation: hash},
		},
		Type: src.Type, Data: src.Data,
	}
	cur := &corev1.Secret{}
	err := rt.Get(ctx, client.ObjectKeyFromObject(want), cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := rt.Create(ctx, want, client.FieldOwner(runtimewrite.FieldOwner)); err != nil {
			return fmt.Errorf("creating the image pull Secret %s/%s in the runtime: %w", want.Namespace, want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading the image pull Secret %s/%s in the runtime: %w", want.Namespace, want.Name, err)
	case cur.Annotations[shared.SpecHashAnnotation] == hash && cur.Type == want.Type:
		return nil
	case cur.Type != want.Type:
		// The type of a Secret cannot change: replace it.
		if err := rt.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("replacing the image pull Secret %s/%s of another type: %w", want.Namespace, want.Name, err)
		}
		if err := rt.Create(ctx, want, client.FieldOwner(runtimewrite.FieldOwner)); err != nil {
			return fmt.Errorf("creating the image pull Secret %s/%s in the runtime: %w", want.Namespace, want.Name, err)
		}
		return nil
	}
	want.ResourceVersion = cur.ResourceVersion
	if err := rt.Update(ctx, want, client.FieldOwner(runtimewrite.FieldOwner)); err != nil {
		return fmt.Errorf("replacing the image pull Secret %s/%s in the runtime: %w", want.Namespace, want.Name, err)
	}
	return nil
}

// ConditionOf is the Kyma condition for the result of Sync.
func ConditionOf(err error) metav1.Condition {
	switch {
	case err == nil:
		return metav1.Condition{Type: Condition, Status: metav1.ConditionTrue, Reason: ReasonSynced,
			Message: "the runtime's image pull Secret matches the KCP's"}
	case errors.Is(err, ErrSourceMissing):
		return metav1.Condition{Type: Condition, Status: metav1.ConditionFalse, Reason: ReasonSourceMissing,
			Message: err.Error() + "; module workloads name it but private images cannot be pulled"}
	default:
		return metav1.Condition{Type: Condition, Status: metav1.ConditionFalse,
			Reason: remote.ConditionReason(err, ReasonSyncFailed), Message: err.Error()}
	}
}
