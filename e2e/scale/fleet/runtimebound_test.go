package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
)

// TestTheFullBoundCopiesWhatTheOperatorWrote: a copy keeps the object's
// content and drops what the server set, so that its create is the
// operator's create; the kubelet's label filter must not see it.
func TestTheFullBoundCopiesWhatTheOperatorWrote(t *testing.T) {
	model := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "agent", "namespace": "runtime-00001", "resourceVersion": "42", "uid": "u",
			"finalizers": []any{"f"}, "labels": map[string]any{shared.ManagedByLabel: shared.OperatorName, "app": "a"}},
		"spec":   map[string]any{"clusterIP": "10.0.0.1", "clusterIPs": []any{"10.0.0.1"}, "ports": []any{map[string]any{"port": int64(443)}}},
		"status": map[string]any{"loadBalancer": map[string]any{}},
	}}
	o := fresh(model, "bound-00003", "agent")
	assert.Equal(t, "bound-00003", o.GetNamespace())
	assert.Empty(t, o.GetResourceVersion())
	assert.Empty(t, o.GetUID())
	assert.Empty(t, o.GetFinalizers())
	assert.Equal(t, map[string]string{"app": "a"}, o.GetLabels())
	assert.NotContains(t, o.Object, "status")
	_, has := o.Object["spec"].(map[string]any)["clusterIP"]
	assert.False(t, has, "the cluster IP is the server's to allocate")
	assert.Contains(t, o.Object["spec"], "ports")
	assert.Equal(t, "10.0.0.1", model.Object["spec"].(map[string]any)["clusterIP"], "the model stays as it was")
}

func TestTheFullBoundsWebhooksOnlySeeTheirNamespace(t *testing.T) {
	h := admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "skr-agent-runtime-00001"},
		Webhooks: []admissionv1.ValidatingWebhook{{Name: "kyma.example", ClientConfig: admissionv1.WebhookClientConfig{
			Service: &admissionv1.ServiceReference{Namespace: "runtime-00001", Name: "skr-agent"}}}}}
	got := boundWebhook(h, 3)
	assert.Equal(t, "skr-agent-runtime-00001-bound-00003", got.Name)
	assert.Equal(t, "bound-00003", got.Webhooks[0].ClientConfig.Service.Namespace)
	assert.Equal(t, map[string]string{corev1.LabelMetadataName: "bound-00003"}, got.Webhooks[0].NamespaceSelector.MatchLabels)
	assert.Equal(t, "runtime-00001", h.Webhooks[0].ClientConfig.Service.Namespace, "the model stays as it was")
}
