package manifest

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

var (
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

// workloadsReady checks the module's Deployments and StatefulSets and
// names the first that is not ready.
func workloadsReady(ctx context.Context, rt *remote.Runtime, objs []*unstructured.Unstructured) (shared.State, string, error) {
	var waiting []string
	total := 0
	for _, o := range objs {
		var (
			state shared.State
			msg   string
			err   error
		)
		switch o.GroupVersionKind().GroupKind() {
		case deploymentKind:
			state, msg, err = deploymentReady(ctx, rt, client.ObjectKeyFromObject(o))
		case statefulSetKind:
			state, msg, err = statefulSetReady(ctx, rt, client.ObjectKeyFromObject(o))
		default:
			continue
		}
		if err != nil {
			return shared.StateProcessing, "", err
		}
		total++
		if state == shared.StateError {
			return state, msg, nil
		}
		if state != shared.StateReady {
			waiting = append(waiting, msg)
		}
	}
	switch {
	case len(waiting) > 0:
		return shared.StateProcessing, "waiting for " + strings.Join(waiting, "; "), nil
	case total == 0:
		return shared.StateReady, "the module has no Deployments or StatefulSets to wait for", nil
	default:
		return shared.StateReady, fmt.Sprintf("all %d workloads are available", total), nil
	}
}

func deploymentReady(ctx context.Context, rt *remote.Runtime, key client.ObjectKey) (shared.State, string, error) {
	d := &appsv1.Deployment{}
	if err := rt.Get(ctx, key, d); err != nil {
		return "", "", fmt.Errorf("reading Deployment %s: %w", key, err)
	}
	want := replicas(d.Spec.Replicas)
	name := "Deployment " + key.String()
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return shared.StateError, name + " exceeded its progress deadline: " + c.Message, nil
		}
	}
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return shared.StateProcessing, name + " (rollout not observed yet)", nil
	case d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want:
		return shared.StateProcessing, fmt.Sprintf("%s (%d of %d replicas available)", name, d.Status.AvailableReplicas, want), nil
	default:
		return shared.StateReady, "", nil
	}
}

func statefulSetReady(ctx context.Context, rt *remote.Runtime, key client.ObjectKey) (shared.State, string, error) {
	s := &appsv1.StatefulSet{}
	if err := rt.Get(ctx, key, s); err != nil {
		return "", "", fmt.Errorf("reading StatefulSet %s: %w", key, err)
	}
	want := replicas(s.Spec.Replicas)
	name := "StatefulSet " + key.String()
	switch {
	case s.Status.ObservedGeneration < s.Generation:
		return shared.StateProcessing, name + " (rollout not observed yet)", nil
	case s.Status.ReadyReplicas < want || s.Status.UpdatedReplicas < want:
		return shared.StateProcessing, fmt.Sprintf("%s (%d of %d replicas ready)", name, s.Status.ReadyReplicas, want), nil
	default:
		return shared.StateReady, "", nil
	}
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
