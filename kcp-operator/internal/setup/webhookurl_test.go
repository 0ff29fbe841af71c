package setup_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	skrwebhookctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/skrwebhook"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// TestWebhookURLAnnotationToAnUnlistedHostIsIgnored: a Kyma annotated to
// have its runtime's webhooks call a URL the operator's allow list does
// not name gets its agent as without the annotation (here the suite's
// Options.AgentWebhookURL), the SKRWebhook condition says why, and a Warning
// Event is recorded: AdmissionReviews, Secret bodies included, never go to
// the annotated URL.
func TestWebhookURLAnnotationToAnUnlistedHostIsIgnored(t *testing.T) {
	const name = "redirected"
	const collector = "https://collector.example.com:8443"
	kubeconfig, err := runtimeEnv.Kubeconfig("lifecycle-manager", "system:masters")
	require.NoError(t, err)
	require.NoError(t, kcp.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + name, Namespace: ns, Labels: map[string]string{shared.KymaNameLabel: name}},
		Data:       map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}))
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: ns,
		Labels: map[string]string{shared.RuntimeIDLabel: "runtime-" + name},
		Annotations: map[string]string{
			shared.SyncNamespaceAnnotation:   name,
			shared.AgentWebhookURLAnnotation: collector,
		},
	}, Spec: v1beta2.KymaSpec{Channel: "regular"}}
	require.NoError(t, kcp.Client.Create(t.Context(), kyma))
	t.Cleanup(func() { _ = kcp.Client.Delete(t.Context(), kyma) })

	hooks := &admissionv1.ValidatingWebhookConfiguration{}
	require.Eventually(t, func() bool {
		_ = testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, name, agent.Fullname(name))
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Name: agent.Fullname(name)}, hooks) == nil
	}, timeout, tick, "the agent's webhooks are applied")
	require.NotEmpty(t, hooks.Webhooks)
	for _, h := range hooks.Webhooks {
		require.NotNil(t, h.ClientConfig.URL, h.Name)
		flagURL := "https://127.0.0.1:" + strconv.Itoa(kubelet.webhookPort) // the suite's Options.AgentWebhookURL
		assert.True(t, strings.HasPrefix(*h.ClientConfig.URL, flagURL+"/validate/"),
			"%s calls %s, not the annotated URL", h.Name, *h.ClientConfig.URL)
	}

	var cond *metav1.Condition
	require.Eventually(t, func() bool {
		_ = testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, name, agent.Fullname(name))
		k := &v1beta2.Kyma{}
		if kcp.Client.Get(t.Context(), client.ObjectKeyFromObject(kyma), k) != nil {
			return false
		}
		cond = meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionSKRWebhook)
		return cond != nil && cond.Status == metav1.ConditionTrue
	}, timeout, tick, "the agent runs")
	assert.Equal(t, skrwebhookctrl.ReasonWebhookURLRefused, cond.Reason)
	assert.Contains(t, cond.Message, collector)
	assert.Contains(t, cond.Message, "--agent-webhook-url-allowed-hosts")

	require.Eventually(t, func() bool {
		var list eventsv1.EventList
		if kcp.Client.List(t.Context(), &list, client.InNamespace(ns)) != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Name == name && e.Reason == skrwebhookctrl.ReasonWebhookURLRefused && e.Type == corev1.EventTypeWarning {
				return strings.Contains(e.Note, collector)
			}
		}
		return false
	}, timeout, 200*time.Millisecond, "a Warning Event names the refused URL")
}
