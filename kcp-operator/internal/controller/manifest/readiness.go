package manifest

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

var (
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

func isWorkload(gvk schema.GroupVersionKind) bool {
	return gvk.GroupKind() == deploymentKind || gvk.GroupKind() == statefulSetKind
}

// workloadsReady checks the module's Deployments and StatefulSets and
// names the first that is not ready. It takes them from seen (what this
// reconcile applied or read) where it can, and reads the others.
func workloadsReady(ctx context.Context, rt *remote.Runtime, objs []*unstructured.Unstructured, seen *versionSet) (shared.State, string, error) {
	var waiting []string
	total := 0
	for _, o := range objs {
		var (
			state shared.State
			msg   string
		)
		switch o.GroupVersionKind().GroupKind() {
		case deploymentKind:
			d := &appsv1.Deployment{}
			if err := readWorkload(ctx, rt, seen, o, d); err != nil {
				return shared.StateProcessing, "", err
			}
			state, msg = deploymentReady(d)
		case statefulSetKind:
			s := &appsv1.StatefulSet{}
			if err := readWorkload(ctx, rt, seen, o, s); err != nil {
				return shared.StateProcessing, "", err
			}
			state, msg = statefulSetReady(s)
		default:
			continue
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

// readWorkload fills into with the stored workload o: seen's copy, else a read.
func readWorkload(ctx context.Context, rt *remote.Runtime, seen *versionSet, o *unstructured.Unstructured, into client.Object) error {
	if u := seen.workload(o); u != nil {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			return fmt.Errorf("decoding %s: %w", describe(o), err)
		}
		return nil
	}
	if err := rt.Get(ctx, client.ObjectKeyFromObject(o), into); err != nil {
		return fmt.Errorf("reading %s: %w", describe(o), err)
	}
	return nil
}

func deploymentReady(d *appsv1.Deployment) (shared.State, string) {
	want := replicas(d.Spec.Replicas)
	name := "Deployment " + d.Namespace + "/" + d.Name
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return shared.StateError, name + " exceeded its progress deadline: " + c.Message
		}
	}
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return shared.StateProcessing, name + " (rollout not observed yet)"
	case d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want:
		return shared.StateProcessing, fmt.Sprintf("%s (%d of %d replicas available)", name, d.Status.AvailableReplicas, want)
	default:
		return shared.StateReady, ""
	}
}

func statefulSetReady(s *appsv1.StatefulSet) (shared.State, string) {
	want := replicas(s.Spec.Replicas)
	name := "StatefulSet " + s.Namespace + "/" + s.Name
	switch {
	case s.Status.ObservedGeneration < s.Generation:
		return shared.StateProcessing, name + " (rollout not observed yet)"
	case s.Status.ReadyReplicas < want || s.Status.UpdatedReplicas < want:
		return shared.StateProcessing, fmt.Sprintf("%s (%d of %d replicas ready)", name, s.Status.ReadyReplicas, want)
	default:
		return shared.StateReady, ""
	}
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
