// Package conditions writes one condition of a Kyma's status by
// server-side apply with the field owner of the controller that owns it, so
// that several controllers report on the same Kyma without overwriting
// each other, and only when the condition changed.
package conditions

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Apply writes cond on kyma unless it already says the same; the
// transition time only moves when the status does.
func Apply(ctx context.Context, c client.Client, kyma *v1beta2.Kyma, cond metav1.Condition, owner string) error {
	cur := meta.FindStatusCondition(kyma.Status.Conditions, cond.Type)
	if cur != nil && cur.Status == cond.Status && cur.Reason == cond.Reason && cur.Message == cond.Message {
		return nil
	}
	cond.ObservedGeneration = kyma.Generation
	cond.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
	if cur != nil && cur.Status == cond.Status {
		cond.LastTransitionTime = cur.LastTransitionTime
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": cond.Type, "status": string(cond.Status), "reason": cond.Reason, "message": cond.Message,
		"observedGeneration": cond.ObservedGeneration, "lastTransitionTime": cond.LastTransitionTime.UTC().Format(time.RFC3339),
	}}}}}
	u.SetAPIVersion(v1beta2.GroupVersion.String())
	u.SetKind(v1beta2.KymaKind)
	u.SetNamespace(kyma.Namespace)
	u.SetName(kyma.Name)
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the %s condition of Kyma %s/%s: %w", cond.Type, kyma.Namespace, kyma.Name, err)
	}
	return nil
}
