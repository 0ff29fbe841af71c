package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	agent := "https://127.0.0.1:900/validate/lifecycle-manager"
	h.Webhooks[0].ClientConfig = admissionv1.WebhookClientConfig{URL: &agent}
	got = boundWebhook(h, 3)
	assert.Nil(t, got.Webhooks[0].ClientConfig.URL, "the copy must not call the real agent")
	require.NotNil(t, got.Webhooks[0].ClientConfig.Service)
	assert.Equal(t, "bound-00003", got.Webhooks[0].ClientConfig.Service.Namespace)
	assert.Equal(t, "/validate/lifecycle-manager", *got.Webhooks[0].ClientConfig.Service.Path)
	assert.Equal(t, &agent, h.Webhooks[0].ClientConfig.URL, "the model stays as it was")
}

// TestTheModelFindsTheAgentsWebhooks: an agent is called by Service or, with a
// real agent, by URL; either way its webhooks belong to its runtime's
// namespace and none of another runtime's do.
func TestTheModelFindsTheAgentsWebhooks(t *testing.T) {
	selector := func(ns string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}
	}
	url := "https://127.0.0.1:900/validate/lifecycle-manager"
	for _, tc := range []struct {
		name string
		hook admissionv1.ValidatingWebhook
		want bool
	}{
		{"service in the namespace", admissionv1.ValidatingWebhook{ClientConfig: admissionv1.WebhookClientConfig{
			Service: &admissionv1.ServiceReference{Namespace: "runtime-00001"}}}, true},
		{"service of another runtime", admissionv1.ValidatingWebhook{ClientConfig: admissionv1.WebhookClientConfig{
			Service: &admissionv1.ServiceReference{Namespace: "runtime-00002"}}, NamespaceSelector: selector("runtime-00001")}, false},
		{"URL scoped to the namespace", admissionv1.ValidatingWebhook{ClientConfig: admissionv1.WebhookClientConfig{URL: &url},
			NamespaceSelector: selector("runtime-00001")}, true},
		{"URL scoped to another namespace", admissionv1.ValidatingWebhook{ClientConfig: admissionv1.WebhookClientConfig{URL: &url},
			NamespaceSelector: selector("runtime-00002")}, false},
		{"URL without a selector", admissionv1.ValidatingWebhook{ClientConfig: admissionv1.WebhookClientConfig{URL: &url}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, webhookOf(tc.hook, "runtime-00001"))
		})
	}
}

// TestTheOperatorsReadsArePricedPerRuntime: the census's GETs of the
// resources a runtime copy holds become reads per runtime; other requests,
// and resources the copy lacks, are left out.
func TestTheOperatorsReadsArePricedPerRuntime(t *testing.T) {
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	}
	m := &runtimeModel{objects: []*unstructured.Unstructured{
		obj("apps/v1", "Deployment"), obj("v1", "ConfigMap"), obj("operator.kyma-project.io/v1beta2", "Kyma"),
		obj("networking.k8s.io/v1", "NetworkPolicy"),
	}}
	got := readsPerRuntime(map[string]float64{
		"GET deployments": 15040, "GET configmaps": 10000, "GET kymas": 6952, "GET networkpolicies": 200,
		"APPLY deployments": 6000, "GET customresourcedefinitions": 122, "LIST moduletemplates": 1004,
	}, 1000, m)
	assert.Equal(t, map[string]int{"deployments": 15, "configmaps": 10, "kymas": 7}, got,
		"0.2 network policy reads per runtime round to none")
	assert.Len(t, m.objectsOf("networkpolicies"), 1)
}
