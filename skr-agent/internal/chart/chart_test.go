package chart_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/certs/pkitest"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func TestDeploymentServiceAndBudget(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca")
	objs := mustRender(t, values(ca.PEM(), kymaWatcher()))
	require.ElementsMatch(t, []string{"Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy", "ValidatingWebhookConfiguration"}, keys(objs))

	d := objs["Deployment"]
	assert.Equal(t, "skr-agent", d.GetName())
	assert.Equal(t, "kyma-system", d.GetNamespace())
	assert.Equal(t, "4f3a9c2e-1b7d-4c8a-9e6f-2d5b8a1c7e30", d.GetLabels()["kyma-project.io/runtime-id"])
	assert.EqualValues(t, 2, field(t, d, "spec", "replicas"))
	pod := field(t, d, "spec", "template", "spec").(map[string]any)
	assert.Equal(t, false, pod["automountServiceAccountToken"])
	assert.Equal(t, true, pod["securityContext"].(map[string]any)["runAsNonRoot"])
	c := pod["containers"].([]any)[0].(map[string]any)
	assert.Equal(t, "registry.example.com/skr-agent:1.2.3", c["image"])
	sc := c["securityContext"].(map[string]any)
	assert.Equal(t, true, sc["readOnlyRootFilesystem"])
	assert.Equal(t, false, sc["allowPrivilegeEscalation"])
	assert.Equal(t, true, sc["runAsNonRoot"])
	res := c["resources"].(map[string]any)
	assert.Contains(t, res, "requests")
	assert.Contains(t, res, "limits")
	assert.Equal(t, "/healthz", c["livenessProbe"].(map[string]any)["httpGet"].(map[string]any)["path"])
	assert.Equal(t, "/readyz", c["readinessProbe"].(map[string]any)["httpGet"].(map[string]any)["path"])

	envVars := map[string]string{}
	for _, e := range c["env"].([]any) {
		m := e.(map[string]any)
		envVars[m["name"].(string)], _ = m["value"].(string)
	}
	assert.Equal(t, map[string]string{
		"KCP_ADDR": "skr-events.kcp.example.com:443", "KCP_CONTRACT": "v2",
		"CA_CERT": "/etc/skr-agent/tls/ca.crt", "TLS_CERT": "/etc/skr-agent/tls/tls.crt", "TLS_KEY": "/etc/skr-agent/tls/tls.key",
		"WEBHOOK_PORT": "8443", "METRICS_PORT": "2112", "GOMEMLIMIT": "100MiB",
	}, envVars)
	assert.Equal(t, "skr-agent-tls", pod["volumes"].([]any)[0].(map[string]any)["secret"].(map[string]any)["secretName"])

	svc := objs["Service"]
	assert.Equal(t, toYAML(t, field(t, d, "spec", "selector", "matchLabels")), toYAML(t, field(t, svc, "spec", "selector")))
	assert.EqualValues(t, 1, field(t, objs["PodDisruptionBudget"], "spec", "minAvailable"))
}

func TestWebhookPerWatcher(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca")
	objs := mustRender(t, values(ca.PEM(), kymaWatcher(), statusWatcher()))
	hooks := field(t, objs["ValidatingWebhookConfiguration"], "webhooks").([]any)
	require.Len(t, hooks, 2)

	spec := hooks[0].(map[string]any)
	assert.Equal(t, "klm-watcher.operator.kyma-project.io", spec["name"])
	assert.Equal(t, "Ignore", spec["failurePolicy"])
	assert.Equal(t, "None", spec["sideEffects"])
	assert.EqualValues(t, 3, spec["timeoutSeconds"])
	assert.Equal(t, []any{"v1"}, spec["admissionReviewVersions"])
	assert.Equal(t, map[string]any{"matchLabels": map[string]any{"operator.kyma-project.io/watched-by": "lifecycle-manager"}}, spec["objectSelector"])
	cc := spec["clientConfig"].(map[string]any)
	assert.Equal(t, map[string]any{"name": "skr-agent", "namespace": "kyma-system", "path": "/validate/lifecycle-manager", "port": float64(443)},
		normalizeNumbers(cc["service"]))
	caBundle, err := base64.StdEncoding.DecodeString(cc["caBundle"].(string))
	require.NoError(t, err)
	assert.Equal(t, string(ca.PEM()), string(caBundle))
	assert.Equal(t, `- apiGroups:
  - operator.kyma-project.io
  apiVersions:
  - v1beta2
  operations:
  - CREATE
  - UPDATE
  - DELETE
  resources:
  - kymas
  scope: '*'`, toYAML(t, spec["rules"]))

	status := hooks[1].(map[string]any)
	assert.Equal(t, "manifest-status.operator.kyma-project.io", status["name"])
	assert.NotContains(t, status, "objectSelector")
	assert.Equal(t, "/validate/manifest-controller", status["clientConfig"].(map[string]any)["service"].(map[string]any)["path"])
	rule := status["rules"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{"manifests/status"}, rule["resources"])
	assert.Equal(t, []any{"UPDATE"}, rule["operations"])
}

func TestURLMode(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca")
	v := set(values(ca.PEM(), kymaWatcher()), "webhook.url", "https://127.0.0.1:9443/")
	objs := mustRender(t, v)
	cc := field(t, objs["ValidatingWebhookConfiguration"], "webhooks").([]any)[0].(map[string]any)["clientConfig"].(map[string]any)
	assert.Equal(t, "https://127.0.0.1:9443/validate/lifecycle-manager", cc["url"])
	assert.NotContains(t, cc, "service")
}

func TestOptionalParts(t *testing.T) {
	objs := mustRender(t, set(values(nil), "replicaCount", 1))
	assert.ElementsMatch(t, []string{"Deployment", "Service", "NetworkPolicy"}, keys(objs),
		"no watchers: no webhook configuration; one replica: no budget that would block node drains")

	v := values(nil)
	set(v, "image.digest", "sha256:0123")
	set(v, "kcp.serverName", "gateway.kcp")
	set(v, "agent.extraArgs", []any{"--drain-timeout=20s"})
	objs = mustRender(t, v)
	c := field(t, objs["Deployment"], "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	assert.Equal(t, "registry.example.com/skr-agent@sha256:0123", c["image"])
	assert.Subset(t, c["args"], []any{"--kcp-server-name=gateway.kcp", "--drain-timeout=20s", "--queue-size=100000"})
}

func TestInvalidValues(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca").PEM()
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"no KCP address", set(values(ca), "kcp.address", ""), "kcp.address"},
		{"watchers without a CA bundle", values(nil, kymaWatcher()), "tls.caBundle"},
		{"watcher without manager", values(ca, map[string]any{"name": "w", "resourceToWatch": map[string]any{"version": "v1", "resource": "configmaps"}}), "manager"},
		{"watcher with an unknown field", values(ca, set(kymaWatcher(), "field", "metadata")), "field"},
		{"watcher without resource", values(ca, set(kymaWatcher(), "resourceToWatch", map[string]any{"version": "v1"})), "resource"},
		{"two watchers of one name", values(ca, kymaWatcher(), kymaWatcher()), "used twice"},
		{"URL with a path", set(values(ca, kymaWatcher()), "webhook.url", "https://127.0.0.1:9443/x"), "/webhook/url"},
		{"plain http URL", set(values(ca, kymaWatcher()), "webhook.url", "http://127.0.0.1:9443"), "/webhook/url"},
		{"unknown log level", set(values(ca), "agent.logLevel", "trace"), "logLevel"},
		{"API server CIDR that is no CIDR", set(values(ca), "networkPolicy.apiServerCIDRs", []any{"10.250.0.0"}), "apiServerCIDRs"},
		{"metrics peer that is no object", set(values(ca), "networkPolicy.metricsPeers", []any{"monitoring"}), "metricsPeers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(tt.values, "kyma-system")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestServerSideDryRun applies every rendered object, for representative
// values, to a real API server with server-side apply and dry-run.
func TestServerSideDryRun(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca").PEM()
	cases := map[string]map[string]any{
		"service mode, two watchers": values(ca, kymaWatcher(), statusWatcher()),
		"URL mode":                   set(values(ca, kymaWatcher()), "webhook.url", "https://127.0.0.1:9443"),
		"no watchers, one replica":   set(values(nil), "replicaCount", 1),
		"scheduling and overrides": set(set(set(values(ca, kymaWatcher()), "fullnameOverride", "agent"),
			"tolerations", []any{map[string]any{"key": "dedicated", "operator": "Exists"}}),
			"podAnnotations", map[string]any{"prometheus.io/scrape": "true"}),
		"network policy with sources": set(set(values(ca, kymaWatcher()), "networkPolicy.apiServerCIDRs", []any{"10.250.0.0/16", "fd00::/8"}),
			"networkPolicy.metricsPeers", []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"app": "prometheus"}}}}),
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			ns := "dry-run-" + strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(name, " ", "-"), ",", ""))
			require.NoError(t, client.IgnoreAlreadyExists(env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
			objs, err := render(v, ns)
			require.NoError(t, err)
			require.NotEmpty(t, objs)
			for _, o := range objs {
				err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(o),
					client.DryRunAll, client.ForceOwnership, client.FieldOwner("skr-agent-chart-test"))
				require.NoError(t, err, "%s %s", o.GetKind(), o.GetName())
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// normalizeNumbers turns the int64 that YAML decoding yields into float64 for comparison.
func normalizeNumbers(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		switch n := x.(type) {
		case int64:
			out[k] = float64(n)
		default:
			out[k] = x
		}
	}
	return out
}
