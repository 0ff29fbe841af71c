package chartstest

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// representativeValues are the installations the chart is made for.
func representativeValues() map[string]map[string]any {
	ownIssuer := certManagerValues()
	set(ownIssuer, "certificates.certManager.issuerRef", map[string]any{"name": "platform-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
	set(ownIssuer, "certificates.caSecret", map[string]any{"name": "platform-ca-keys", "namespace": "cert-manager"})

	direct := set(baseValues(), "listener.mode", "direct")
	set(direct, "listener.service", map[string]any{"type": "LoadBalancer", "loadBalancerSourceRanges": []any{"203.0.113.0/24"},
		"annotations": map[string]any{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}})

	extras := set(set(baseValues(), "operator.featureGates", map[string]any{"Profiling": true}), "operator.ociRegistryCredSecret", "registries/pull")
	set(extras, "operator.insecureRegistries", []any{"registry.local:5000"})
	set(extras, "maintenancePolicy.configMap", "lifecycle-manager-maintenance")
	set(extras, "operator.extraArgs", []any{"--kyma-concurrency=16"})
	set(extras, "namespaces", []any{"kcp-system", "kcp-extra"})
	set(extras, "tolerations", []any{map[string]any{"key": "dedicated", "operator": "Exists"}})
	set(extras, "podAnnotations", map[string]any{"example.com/team": "lifecycle"})
	set(extras, "networkPolicy.extraListenerPeers", []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.1.0.0/16"}}})

	shardsDirect := set(shardValues(), "listener.mode", "direct")
	set(shardsDirect, "listener.service.type", "LoadBalancer")

	return map[string]map[string]any{
		"three shards":                        set(set(shardValues(), "serviceMonitor.enabled", true), "prometheusRule.enabled", true),
		"three shards in direct mode":         shardsDirect,
		"defaults":                            baseValues(),
		"cert-manager with the chart's CA":    certManagerValues(),
		"cert-manager with a ClusterIssuer":   ownIssuer,
		"ServiceMonitor and two replicas":     set(set(baseValues(), "serviceMonitor.enabled", true), "replicaCount", 2),
		"PrometheusRule":                      set(baseValues(), "prometheusRule.enabled", true),
		"direct mode behind a load balancer":  direct,
		"more namespaces, gates, pull Secret": extras,
	}
}

// TestServerSideDryRun applies every rendered object, for representative
// values, to a real API server with server-side apply (strict about unknown
// fields) and dry-run.
func TestServerSideDryRun(t *testing.T) {
	for _, ns := range []string{"lifecycle-manager", "kcp-system", "kcp-extra", "istio-system", "cert-manager", "registries"} {
		require.NoError(t, client.IgnoreAlreadyExists(env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
	}
	for name, v := range representativeValues() {
		t.Run(name, func(t *testing.T) {
			objs, err := render(v, "lifecycle-manager")
			require.NoError(t, err)
			require.NotEmpty(t, objs)
			for _, o := range objs {
				err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o),
					client.DryRunAll, client.ForceOwnership, client.FieldOwner("kcp-operator-chart-test"))
				require.NoError(t, err, "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
			}
		})
	}
}
