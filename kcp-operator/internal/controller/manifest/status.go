package manifest

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/recorder"
)

// writeStatus turns the observation into the Manifest status and applies
// it when it changed, unless it follows the record written before an
// apply and records nothing more, which is held until the next reconcile
// (see heldStatuses). It is the only place that writes Manifest status.
func (r *Reconciler) writeStatus(ctx context.Context, mf *v1beta2.Manifest, obs observation) error {
	status := nextStatus(mf, obs)
	if equality.Semantic.DeepEqual(status, mf.Status) && !r.held.pending(mf) {
		return nil
	}
	if r.held.hold(mf, status) {
		return nil
	}
	if recorder.Problem(mf.Status.State, status.State) {
		r.event(mf, status.State == shared.StateError || status.State == shared.StateWarning,
			"State"+string(status.State), obs.message)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1beta2.Manifest{Status: status})
	if err != nil {
		return fmt.Errorf("encoding the status of Manifest %s: %w", mf.Name, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": content["status"]}}
	u.SetAPIVersion(v1beta2.GroupVersion.String())
	u.SetKind(v1beta2.ManifestKind)
	u.SetNamespace(mf.Namespace)
	u.SetName(mf.Name)
	if err := r.KCP.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(StatusOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the status of Manifest %s: %w", mf.Name, err)
	}
	r.held.drop(keyOf(mf))
	mf.Status = status
	return nil
}

// nextStatus is mf's status with what obs found.
func nextStatus(mf *v1beta2.Manifest, obs observation) v1beta2.ManifestStatus {
	status := *mf.Status.DeepCopy()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	status.State = obs.state
	if !obs.keepSynced {
		status.Synced = obs.synced
	}
	if obs.applied != "" {
		status.Applied = obs.applied
	}
	if obs.setCreated {
		status.Created = obs.created
	}
	for _, c := range obs.conditions {
		c.ObservedGeneration = mf.Generation
		c.LastTransitionTime = now
		meta.SetStatusCondition(&status.Conditions, c)
	}
	if status.LastOperation.Operation != obs.message {
		status.LastOperation = shared.LastOperation{Operation: obs.message, LastUpdateTime: now}
	}
	return status
}
