package chartstest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const shardLabel = "operator.kyma-project.io/shard"

// shardValues are three shards: a with the common address, b with its own
// address, resources and two replicas, c with its own address.
func shardValues() map[string]any {
	return set(baseValues(), "shards", []any{
		map[string]any{"name": "a"},
		map[string]any{
			"name": "b", "agentKCPAddress": "b.skr-events.kcp.example.com:443", "replicaCount": 2,
			"resources":  map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "2Gi"}, "limits": map[string]any{"memory": "3Gi"}},
			"goMemLimit": "2GiB",
		},
		map[string]any{"name": "c", "agentKCPAddress": "c.skr-events.kcp.example.com"},
	})
}

// shardContainer returns the operator's container of a shard's Deployment.
func (r rendered) shardContainer(t *testing.T, deployment string) map[string]any {
	t.Helper()
	cs := field(t, r.one(t, "Deployment", deployment), "spec", "template", "spec", "containers").([]any)
	require.Len(t, cs, 1)
	return cs[0].(map[string]any)
}

// shardArgs returns the flags of a shard's Deployment as name → value.
func (r rendered) shardArgs(t *testing.T, deployment string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range r.shardContainer(t, deployment)["args"].([]any) {
		name, value, _ := strings.Cut(a.(string), "=")
		require.NotContains(t, out, name, "flag given twice")
		out[name] = value
	}
	return out
}

func TestShardsDeployments(t *testing.T) {
	objs := mustRender(t, shardValues(), "lifecycle-manager")
	kinds := objs.kinds()
	for _, want := range []string{
		"Deployment lifecycle-manager/kcp-operator-a", "Deployment lifecycle-manager/kcp-operator-b", "Deployment lifecycle-manager/kcp-operator-c",
		"Service lifecycle-manager/kcp-operator-events-a", "Service lifecycle-manager/kcp-operator-events-b", "Service lifecycle-manager/kcp-operator-events-c",
		"Service lifecycle-manager/kcp-operator-metrics", "Service lifecycle-manager/kcp-operator-webhook",
		"PodDisruptionBudget lifecycle-manager/kcp-operator-b", "ConfigMap kcp-system/lifecycle-manager-shards",
		"Job lifecycle-manager/kcp-operator-crd-upgrade", "Watcher kcp-system/klm-watcher",
	} {
		assert.Contains(t, kinds, want)
	}
	assert.Len(t, objs.all("Deployment"), 3, "no unsharded Deployment beside the shards")
	assert.Len(t, objs.all("PodDisruptionBudget"), 1, "a budget only for the shard with two replicas")
	assert.Len(t, objs.all("Job"), 1, "one CRD upgrade hook")

	dns := "skr-events.kcp.example.com,b.skr-events.kcp.example.com,c.skr-events.kcp.example.com"
	tests := []struct {
		shard, address, gateway string
		first                   bool
		replicas                int64
		memoryLimit, goMemLimit string
	}{
		{"a", "skr-events.kcp.example.com:443", "lifecycle-manager-events", true, 1, "4Gi", "3GiB"},
		{"b", "b.skr-events.kcp.example.com:443", "", false, 2, "3Gi", "2GiB"},
		{"c", "c.skr-events.kcp.example.com", "", false, 1, "4Gi", "3GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.shard, func(t *testing.T) {
			name := "kcp-operator-" + tt.shard
			d := objs.one(t, "Deployment", name)
			assert.EqualValues(t, tt.replicas, field(t, d, "spec", "replicas"))
			selector := field(t, d, "spec", "selector", "matchLabels").(map[string]any)
			assert.Equal(t, tt.shard, selector[shardLabel], "each Deployment selects only its shard's pods")
			podLabels := field(t, d, "spec", "template", "metadata", "labels").(map[string]any)
			for k, v := range selector {
				assert.Equal(t, v, podLabels[k], "pod label %s", k)
			}

			args := objs.shardArgs(t, name)
			assert.Equal(t, tt.shard, args["--shard"])
			assert.Equal(t, "15s", args["--leader-election-lease-duration"], "a shard elects its leader (its own Lease)")
			assert.NotContains(t, args, "--leader-elect")
			assert.Equal(t, "lifecycle-manager/kcp-operator-events-"+tt.shard, args["--listener-service"])
			assert.Equal(t, tt.address, args["--agent-kcp-address"])
			assert.Contains(t, args, "--istio-gateway-name")
			assert.Equal(t, tt.gateway, args["--istio-gateway-name"], "only the first shard keeps the Gateway")
			assert.Equal(t, dns, args["--cert-endpoint-dns-names"], "every shard agrees on the endpoint certificate, which names every shard's host")
			c := objs.shardContainer(t, name)
			ports := toYAML(t, c["ports"])
			if tt.first {
				assert.Equal(t, ":9443", args["--webhook-bind-address"])
				assert.Equal(t, "lifecycle-manager/kcp-operator-webhook", args["--webhook-service"])
				assert.Contains(t, ports, "name: webhook")
			} else {
				assert.NotContains(t, args, "--webhook-bind-address", "only the first shard serves the conversion webhook")
				assert.NotContains(t, args, "--webhook-service")
				assert.NotContains(t, ports, "name: webhook")
			}
			assert.Equal(t, tt.memoryLimit, c["resources"].(map[string]any)["limits"].(map[string]any)["memory"])
			assert.Equal(t, tt.goMemLimit, envValue(t, c, "GOMEMLIMIT"))

			svc := objs.one(t, "Service", "kcp-operator-events-"+tt.shard)
			assert.NotContains(t, svc.Object["spec"], "selector", "the shard's leader keeps the endpoints")
			assert.Equal(t, tt.shard, svc.GetLabels()[shardLabel])
		})
	}

	cm := objs.one(t, "ConfigMap", "lifecycle-manager-shards")
	assert.Equal(t, map[string]any{"shards": "a,b,c"}, cm.Object["data"], "the names in list order: the first coordinates")

	webhook := field(t, objs.one(t, "Service", "kcp-operator-webhook"), "spec", "selector").(map[string]any)
	assert.Equal(t, "a", webhook[shardLabel], "the conversion webhook Service selects only the first shard's pods")
	assert.Equal(t, "kcp-operator-events-a", field(t, objs.one(t, "Watcher"), "spec", "serviceInfo", "name"))
	pdb := field(t, objs.one(t, "PodDisruptionBudget"), "spec", "selector", "matchLabels").(map[string]any)
	assert.Equal(t, "b", pdb[shardLabel])

	// Metrics: the one metrics Service selects every shard's pods.
	metrics := field(t, objs.one(t, "Service", "kcp-operator-metrics"), "spec", "selector").(map[string]any)
	assert.NotContains(t, metrics, shardLabel)
	for _, d := range objs.all("Deployment") {
		podLabels := field(t, d, "spec", "template", "metadata", "labels").(map[string]any)
		for k, v := range metrics {
			assert.Equal(t, v, podLabels[k], "%s: the metrics Service selects its pods by %s", d.GetName(), k)
		}
	}
}

// TestShardsDirectMode: in direct mode each shard's agents reach its own
// listener Service, here on its own node port.
func TestShardsDirectMode(t *testing.T) {
	v := set(shardValues(), "listener.mode", "direct")
	set(v, "listener.service", map[string]any{"type": "NodePort", "nodePort": 30882})
	shards := v["shards"].([]any)
	shards[1].(map[string]any)["nodePort"] = 30883
	shards[2].(map[string]any)["nodePort"] = 30884
	objs := mustRender(t, v, "lifecycle-manager")
	for shard, port := range map[string]int64{"a": 30882, "b": 30883, "c": 30884} {
		ports := field(t, objs.one(t, "Service", "kcp-operator-events-"+shard), "spec", "ports").([]any)
		assert.EqualValues(t, port, ports[0].(map[string]any)["nodePort"], shard)
		args := objs.shardArgs(t, "kcp-operator-"+shard)
		assert.NotContains(t, args, "--istio-gateway-name", "no Istio in direct mode")
		assert.NotEmpty(t, args["--cert-endpoint-dns-names"], "each direct listener needs the endpoint certificate")
	}
}

// TestUnshardedAsBefore: shards: [] renders what no shards value renders,
// with none of the shard objects or flags.
func TestUnshardedAsBefore(t *testing.T) {
	for name, v := range map[string]map[string]any{
		"defaults":     baseValues(),
		"two replicas": set(set(baseValues(), "replicaCount", 2), "serviceMonitor.enabled", true),
		"direct mode":  set(baseValues(), "listener.mode", "direct"),
	} {
		t.Run(name, func(t *testing.T) {
			without := mustRender(t, v, "lifecycle-manager")
			empty := mustRender(t, set(v, "shards", []any{}), "lifecycle-manager")
			require.Equal(t, len(without), len(empty))
			for i := range without {
				assert.Equal(t, without[i].Object, empty[i].Object, "%s %s", without[i].GetKind(), without[i].GetName())
			}
			assert.NotContains(t, empty.kinds(), "ConfigMap kcp-system/lifecycle-manager-shards")
			assert.NotContains(t, empty.args(t), "--shard")
			d := empty.one(t, "Deployment", "kcp-operator")
			assert.NotContains(t, field(t, d, "spec", "selector", "matchLabels"), shardLabel, "the selector is immutable: unsharded it stays as it was")
			for _, o := range empty {
				assert.NotContains(t, o.GetLabels(), shardLabel, "%s %s", o.GetKind(), o.GetName())
			}
			if sm := empty.all("ServiceMonitor"); len(sm) > 0 {
				assert.NotContains(t, toYAML(t, sm[0].Object["spec"]), "relabelings")
			}
		})
	}
}

func TestInvalidShards(t *testing.T) {
	shards := func(names ...any) map[string]any {
		list := make([]any, 0, len(names))
		for i, n := range names {
			if m, ok := n.(map[string]any); ok {
				list = append(list, m)
				continue
			}
			list = append(list, map[string]any{"name": n, "agentKCPAddress": fmt.Sprintf("shard%d.events.example.com", i)})
		}
		return set(baseValues(), "shards", list)
	}
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"upper case", shards("a", "B"), `shards[1].name "B" is not a valid shard name: a DNS-1123 label`},
		{"leading dash", shards("-a"), `shards[0].name "-a" is not a valid shard name`},
		{"a dot", shards("a.b"), `shards[0].name "a.b" is not a valid shard name`},
		{"empty", shards(map[string]any{"name": ""}), `shards[0].name "" is not a valid shard name`},
		{"41 characters", shards(strings.Repeat("x", 41)), "of at most 40 characters"},
		{"twice", shards("a", "b", "a"), `shards[2].name "a" is given twice: shard names must be unique`},
		{"too long with the full name", set(shards(strings.Repeat("x", 40)), "fullnameOverride", strings.Repeat("f", 20)),
			"longer than 63 characters"},
		{"two shards on one host", shards(map[string]any{"name": "a"}, map[string]any{"name": "b"}),
			"shards[1] (b) has the agent address of shard a (skr-events.kcp.example.com): each shard's agents need their own"},
		{"no address", set(shards(map[string]any{"name": "a"}), "agent.kcpAddress", ""), "shards[0] (a) has no agent address"},
		{"without leader election", set(shards("a", "b"), "leaderElection.leaseDuration", "0s"), "shards need leader election"},
		{"one node port for two shards", set(set(set(shards("a", "b"), "listener.mode", "direct"), "listener.service.type", "NodePort"),
			"listener.service.nodePort", 30882), "node port 30882 is taken by shard a"},
		{"an unknown shard field", shards(map[string]any{"name": "a", "replicas": 2}), "replicas"},
		{"a shard address with a path", shards(map[string]any{"name": "a", "agentKCPAddress": "https://a.example.com/x"}), "agentKCPAddress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(tt.values, "lifecycle-manager")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestShardsServiceMonitor: the series of every shard's pods carry its shard.
func TestShardsServiceMonitor(t *testing.T) {
	objs := mustRender(t, set(shardValues(), "serviceMonitor.enabled", true), "lifecycle-manager")
	endpoints := field(t, objs.one(t, "ServiceMonitor"), "spec", "endpoints").([]any)
	require.Len(t, endpoints, 1)
	assert.Equal(t, `- sourceLabels:
  - __meta_kubernetes_pod_label_operator_kyma_project_io_shard
  targetLabel: shard`, toYAML(t, endpoints[0].(map[string]any)["relabelings"]))
}
