package chart_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNetworkPolicy checks that the policy selects the Deployment's pods,
// admits exactly the container ports, and admits the webhook port from
// every source unless sources are configured.
func TestNetworkPolicy(t *testing.T) {
	tunnel := map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "kube-system"}},
		"podSelector":       map[string]any{"matchLabels": map[string]any{"app": "vpn-shoot"}},
	}
	monitoring := map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}
	tests := []struct {
		name        string
		values      map[string]any
		webhookFrom []any // nil: every source
		metricsFrom []any // nil: no rule for the metrics port
	}{
		{name: "defaults", values: values(nil)},
		{name: "other ports and names", values: set(set(set(set(values(nil), "webhook.port", 9443), "metrics.port", 9090),
			"nameOverride", "agent"), "podLabels", map[string]any{"team": "klm"})},
		{name: "API server CIDRs and a tunnel pod",
			values: set(set(values(nil), "networkPolicy.apiServerCIDRs", []any{"10.250.0.0/16", "fd00:10::/64"}), "networkPolicy.webhookPeers", []any{tunnel}),
			webhookFrom: []any{
				map[string]any{"ipBlock": map[string]any{"cidr": "10.250.0.0/16"}},
				map[string]any{"ipBlock": map[string]any{"cidr": "fd00:10::/64"}},
				tunnel,
			}},
		{name: "scraped from monitoring", values: set(values(nil), "networkPolicy.metricsPeers", []any{monitoring}), metricsFrom: []any{monitoring}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := mustRender(t, tt.values)
			np, d := objs["NetworkPolicy"], objs["Deployment"]
			require.NotNil(t, np)
			assertSelectsThePods(t, np, d)
			assert.Equal(t, []any{"Ingress"}, field(t, np, "spec", "policyTypes"))

			ports := containerPorts(t, d)
			rules := field(t, np, "spec", "ingress").([]any)
			byPort := map[int64]map[string]any{}
			for _, r := range rules {
				rule := r.(map[string]any)
				rulePorts := rule["ports"].([]any)
				require.Len(t, rulePorts, 1, "one port per rule, so that each has its own sources")
				p := rulePorts[0].(map[string]any)
				assert.Equal(t, "TCP", p["protocol"])
				byPort[asInt(t, p["port"])] = rule
			}
			webhook, hasWebhook := byPort[ports["webhook"]]
			require.True(t, hasWebhook, "the webhook's container port %d is admitted", ports["webhook"])
			assert.Equal(t, tt.webhookFrom, fromOf(webhook))
			metricsRule, hasMetrics := byPort[ports["metrics"]]
			if tt.metricsFrom == nil {
				assert.False(t, hasMetrics, "no scraper configured: the metrics port admits no one")
				assert.Len(t, rules, 1)
				return
			}
			require.True(t, hasMetrics, "the metrics container port %d is admitted", ports["metrics"])
			assert.Equal(t, tt.metricsFrom, fromOf(metricsRule))
			assert.Len(t, rules, 2)
		})
	}

	t.Run("disabled", func(t *testing.T) {
		objs := mustRender(t, set(values(nil), "networkPolicy.enabled", false))
		assert.NotContains(t, keys(objs), "NetworkPolicy")
	})
}

// assertSelectsThePods: the policy's selector is the Deployment's, and
// the pod template carries its labels.
func assertSelectsThePods(t *testing.T, np, d *unstructured.Unstructured) {
	t.Helper()
	selector := field(t, np, "spec", "podSelector", "matchLabels").(map[string]any)
	require.NotEmpty(t, selector)
	assert.Equal(t, field(t, d, "spec", "selector", "matchLabels"), selector)
	podLabels := field(t, d, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range selector {
		assert.Equal(t, v, podLabels[k], "pod label %s", k)
	}
	assert.Equal(t, d.GetNamespace(), np.GetNamespace())
}

// containerPorts maps the agent container's port names to their numbers.
func containerPorts(t *testing.T, d *unstructured.Unstructured) map[string]int64 {
	t.Helper()
	c := field(t, d, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	out := map[string]int64{}
	for _, p := range c["ports"].([]any) {
		port := p.(map[string]any)
		out[port["name"].(string)] = asInt(t, port["containerPort"])
	}
	require.Len(t, out, 2, "webhook and metrics")
	return out
}

// fromOf is a rule's sources; nil when it admits every source.
func fromOf(rule map[string]any) []any {
	from, _ := rule["from"].([]any)
	return from
}

// asInt reads a decoded YAML number.
func asInt(t *testing.T, v any) int64 {
	t.Helper()
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	default:
		t.Fatalf("%v (%T) is not a number", v, v)
		return 0
	}
}
