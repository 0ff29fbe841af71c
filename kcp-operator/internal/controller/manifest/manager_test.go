package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func toUnstructured(t *testing.T, obj runtime.Object, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func TestTheManagerIsWhereTheRenderPutIt(t *testing.T) {
	deployment := func(ns, name string) *unstructured.Unstructured {
		return toUnstructured(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, "apps/v1", "Deployment")
	}
	statefulSet := toUnstructured(t, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "sync-ns", Name: "keda-manager"}}, "apps/v1", "StatefulSet")
	tests := []struct {
		name string
		objs []*unstructured.Unstructured
		want string
	}{
		{"rendered into the runtime's sync namespace", []*unstructured.Unstructured{deployment("sync-ns", "keda-manager")}, "sync-ns"},
		{"rendered where the template says", []*unstructured.Unstructured{deployment("kyma-system", "keda-manager")}, "kyma-system"},
		{"the named namespace among several", []*unstructured.Unstructured{deployment("a", "keda-manager"), deployment("kyma-system", "keda-manager")}, "kyma-system"},
		{"several elsewhere: the template's", []*unstructured.Unstructured{deployment("a", "keda-manager"), deployment("b", "keda-manager")}, "kyma-system"},
		{"another name", []*unstructured.Unstructured{deployment("sync-ns", "keda-sidecar")}, "kyma-system"},
		{"another kind", []*unstructured.Unstructured{statefulSet}, "kyma-system"},
		{"not rendered at all", nil, "kyma-system"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &v1beta2.Manager{Name: "keda-manager", Namespace: "kyma-system",
				GroupVersionKind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}
			got := renderedManager(m, tt.objs)
			assert.Equal(t, tt.want, got.Namespace)
			assert.Equal(t, "kyma-system", m.Namespace, "the Manifest's spec is not changed")
		})
	}
}

func TestRolloutOfTheManager(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "keda-manager", Namespace: "kyma-system", Generation: 2}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    shared.State
		wantMsg string
	}{
		{"Deployment rolled out", toUnstructured(t, &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 2, AvailableReplicas: 2}}, "apps/v1", "Deployment"),
			shared.StateReady, "manager Deployment kyma-system/keda-manager is rolled out"},
		{"Deployment rollout not observed", toUnstructured(t, &appsv1.Deployment{ObjectMeta: meta,
			Status: appsv1.DeploymentStatus{ObservedGeneration: 1, UpdatedReplicas: 1, AvailableReplicas: 1}}, "apps/v1", "Deployment"),
			shared.StateProcessing, "waiting for the module's manager Deployment kyma-system/keda-manager (rollout not observed yet)"},
		{"Deployment partly available", toUnstructured(t, &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 3, AvailableReplicas: 1}}, "apps/v1", "Deployment"),
			shared.StateProcessing, "(1 of 3 replicas available)"},
		{"Deployment past its deadline", toUnstructured(t, &appsv1.Deployment{ObjectMeta: meta, Status: appsv1.DeploymentStatus{
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
				Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet has timed out"}}}}, "apps/v1", "Deployment"),
			shared.StateError, "the module's manager Deployment kyma-system/keda-manager exceeded its progress deadline"},
		{"StatefulSet rolled out", toUnstructured(t, &appsv1.StatefulSet{ObjectMeta: meta,
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, ReadyReplicas: 1, UpdatedReplicas: 1}}, "apps/v1", "StatefulSet"),
			shared.StateReady, "manager StatefulSet kyma-system/keda-manager is rolled out"},
		{"StatefulSet not ready", toUnstructured(t, &appsv1.StatefulSet{ObjectMeta: meta,
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, ReadyReplicas: 0, UpdatedReplicas: 1}}, "apps/v1", "StatefulSet"),
			shared.StateProcessing, "(0 of 1 replicas ready)"},
		{"another kind exists", toUnstructured(t, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "kedas.operator.kyma-project.io"}},
			"apiextensions.k8s.io/v1", "CustomResourceDefinition"),
			shared.StateReady, "manager CustomResourceDefinition kedas.operator.kyma-project.io exists"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msg, err := rolloutOf(tc.obj)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Contains(t, msg, tc.wantMsg)
		})
	}
}
