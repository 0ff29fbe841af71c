package manifest

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// workloads is the readiness of the module's workloads: its manager's
// when the module names one, else all its Deployments' and StatefulSets'.
func workloads(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime, objs []*unstructured.Unstructured, seen *versionSet) (shared.State, string, error) {
	if mf.Spec.Manager != nil {
		return managerReady(ctx, rt, renderedManager(mf.Spec.Manager, objs), seen)
	}
	return workloadsReady(ctx, rt, objs, seen)
}

// renderedManager places the manager where this runtime's render put it:
// modulectl records the namespace it rendered into (kyma-system), and a
// runtime with a sync namespace gets the module's objects there. When the
// module renders one object of the manager's kind and name, or one in the
// named namespace, that object's namespace is the manager's; else the
// template's stands.
func renderedManager(m *v1beta2.Manager, objs []*unstructured.Unstructured) *v1beta2.Manager {
	gk := schema.GroupKind{Group: m.Group, Kind: m.Kind}
	var found []string
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != gk || o.GetName() != m.Name {
			continue
		}
		if o.GetNamespace() == m.Namespace {
			return m
		}
		found = append(found, o.GetNamespace())
	}
	if len(found) != 1 {
		return m
	}
	placed := m.DeepCopy()
	placed.Namespace = found[0]
	return placed
}

// managerReady reports the module's manager: a Deployment or StatefulSet is
// ready when its rollout is complete, any other kind (a module without an
// operator names, say, its CRD) once it exists. A manager that is missing,
// or whose kind the runtime does not serve, is waited for.
func managerReady(ctx context.Context, rt *remote.Runtime, m *v1beta2.Manager, seen *versionSet) (shared.State, string, error) {
	gvk := schema.GroupVersionKind{Group: m.Group, Version: m.Version, Kind: m.Kind}
	ref := &unstructured.Unstructured{}
	ref.SetGroupVersionKind(gvk)
	ref.SetName(m.Name)
	namespaced, err := namespacedIn(rt)(gvk)
	switch {
	case meta.IsNoMatchError(err):
		return shared.StateProcessing, fmt.Sprintf("waiting for the module's manager %s %s: the runtime does not serve %s", m.Kind, m.Name, gvk), nil
	case err != nil:
		return shared.StateProcessing, "", err
	case namespaced && m.Namespace == "":
		ref.SetNamespace(rt.Namespace)
	case namespaced:
		ref.SetNamespace(m.Namespace)
	}
	current := seen.workload(ref)
	if current == nil {
		got, err := readPast(ctx, rt, ref, true, false)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return shared.StateProcessing, "waiting for the module's manager " + describe(ref) + ": it does not exist", nil
		case err != nil:
			return shared.StateProcessing, "", fmt.Errorf("reading the module's manager %s: %w", describe(ref), err)
		}
		current, _ = got.(*unstructured.Unstructured) // whole reads are unstructured
	}
	return rolloutOf(current)
}

// rolloutOf judges a manager that exists.
func rolloutOf(u *unstructured.Unstructured) (shared.State, string, error) {
	var (
		state shared.State
		msg   string
	)
	switch u.GroupVersionKind().GroupKind() {
	case deploymentKind:
		d := &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
			return shared.StateProcessing, "", fmt.Errorf("decoding the module's manager %s: %w", describe(u), err)
		}
		state, msg = deploymentReady(d)
	case statefulSetKind:
		s := &appsv1.StatefulSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
			return shared.StateProcessing, "", fmt.Errorf("decoding the module's manager %s: %w", describe(u), err)
		}
		state, msg = statefulSetReady(s)
	default:
		return shared.StateReady, "the module's manager " + describe(u) + " exists", nil
	}
	switch state {
	case shared.StateReady:
		return state, "the module's manager " + describe(u) + " is rolled out", nil
	case shared.StateError:
		return state, "the module's manager " + msg, nil
	default:
		return state, "waiting for the module's manager " + msg, nil
	}
}
