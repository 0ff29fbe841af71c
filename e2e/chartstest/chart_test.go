package chartstest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaults(t *testing.T) {
	objs := mustRender(t, baseValues(), "lifecycle-manager")
	assert.Equal(t, []string{
		"ClusterRole /kcp-operator-conversion",
		"ClusterRole /kcp-operator-crd-upgrade",
		"ClusterRoleBinding /kcp-operator-conversion",
		"ClusterRoleBinding /kcp-operator-crd-upgrade",
		"ConfigMap lifecycle-manager/kcp-operator-dashboard",
		"Deployment lifecycle-manager/kcp-operator",
		"Job lifecycle-manager/kcp-operator-crd-upgrade",
		"NetworkPolicy lifecycle-manager/kcp-operator",
		"Role istio-system/kcp-operator",
		"Role kcp-system/kcp-operator",
		"Role lifecycle-manager/kcp-operator",
		"RoleBinding istio-system/kcp-operator",
		"RoleBinding kcp-system/kcp-operator",
		"RoleBinding lifecycle-manager/kcp-operator",
		"Service lifecycle-manager/kcp-operator-events",
		"Service lifecycle-manager/kcp-operator-metrics",
		"Service lifecycle-manager/kcp-operator-webhook",
		"ServiceAccount lifecycle-manager/kcp-operator",
		"ServiceAccount lifecycle-manager/kcp-operator-crd-upgrade",
		"Watcher kcp-system/klm-watcher",
	}, objs.kinds(), "one replica: no budget; no ServiceMonitor, no cert-manager objects")

	d := objs.one(t, "Deployment")
	assert.EqualValues(t, 1, field(t, d, "spec", "replicas"))
	pod := field(t, d, "spec", "template", "spec").(map[string]any)
	assert.Equal(t, "kcp-operator", pod["serviceAccountName"])
	assert.Equal(t, true, pod["securityContext"].(map[string]any)["runAsNonRoot"])
	c := objs.container(t)
	assert.Equal(t, "registry.example.com/kcp-operator:1.2.3", c["image"])
	sc := c["securityContext"].(map[string]any)
	assert.Equal(t, true, sc["readOnlyRootFilesystem"])
	assert.Equal(t, false, sc["allowPrivilegeEscalation"])
	assert.Equal(t, map[string]any{"drop": []any{"ALL"}}, sc["capabilities"])
	assert.Equal(t, "/healthz", c["livenessProbe"].(map[string]any)["httpGet"].(map[string]any)["path"])
	assert.Equal(t, "/readyz", c["readinessProbe"].(map[string]any)["httpGet"].(map[string]any)["path"])
	assert.Contains(t, c["resources"], "requests")
	assert.Contains(t, c["resources"], "limits")
	assert.Equal(t, `- containerPort: 8080
  name: metrics
  protocol: TCP
- containerPort: 8081
  name: health
  protocol: TCP
- containerPort: 8082
  name: listener
  protocol: TCP
- containerPort: 9443
  name: webhook
  protocol: TCP`, toYAML(t, c["ports"]))
	assert.Equal(t, `- mountPath: /tmp
  name: tmp`, toYAML(t, c["volumeMounts"]))
	assert.Equal(t, `- emptyDir:
    sizeLimit: 1088Mi
  name: tmp`, toYAML(t, pod["volumes"]), "the module layer cache (1 GiB) lives under $TMPDIR")

	args := objs.args(t)
	for flag, want := range map[string]string{
		"--leader-election-lease-duration": "15s",
		"--listener-service":               "lifecycle-manager/kcp-operator-events",
	} {
		assert.Equal(t, want, args[flag], flag)
		delete(args, flag)
	}
	assert.Equal(t, map[string]string{
		"--namespaces":                "kcp-system",
		"--metrics-bind-address":      ":8080",
		"--health-probe-bind-address": ":8081",
		"--listener-bind-address":     ":8082",
		"--listener-mode":             "gateway",
		"--listener-trusted-proxies":  "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,fd00::/8",
		"--istio-gateway-name":        "lifecycle-manager-events",
		"--agent-kcp-address":         "skr-events.kcp.example.com:443",
		"--agent-image":               "registry.example.com/skr-agent:1.2.3",
		"--module-signature-policy":   "warn",
		"--webhook-bind-address":      ":9443",
		"--webhook-service":           "lifecycle-manager/kcp-operator-webhook",
		"--cert-namespace":            "kcp-system",
		"--cert-ca-secret":            "kcp-system/lifecycle-manager-ca",
		"--cert-endpoint-namespace":   "istio-system",
		"--cert-endpoint-dns-names":   "skr-events.kcp.example.com",
		"--zap-log-level":             "info",
	}, args)
}

// TestListenerServiceAndWatcher checks the path of an event: the Watcher
// routes to the listener Service, which reaches the container's listener port.
func TestListenerServiceAndWatcher(t *testing.T) {
	objs := mustRender(t, baseValues(), "lifecycle-manager")
	svc := objs.one(t, "Service", "kcp-operator-events")
	assert.Equal(t, "ClusterIP", field(t, svc, "spec", "type"))
	assert.NotContains(t, svc.Object["spec"], "selector", "the leader keeps the endpoints: a standby gets no events")
	args := objs.args(t)
	assert.Equal(t, "lifecycle-manager/kcp-operator-events", args["--listener-service"])
	assert.Contains(t, toYAML(t, objs.container(t)["env"]), `- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP`)
	assert.Equal(t, `- name: http-events
  port: 8082
  protocol: TCP
  targetPort: listener`, toYAML(t, field(t, svc, "spec", "ports")))

	w := objs.one(t, "Watcher")
	assert.Equal(t, "kcp-system", w.GetNamespace(), "Watchers select Gateways of their own namespace: the Gateway's")
	assert.Equal(t, `field: spec
gateway:
  selector:
    matchLabels:
      operator.kyma-project.io/watcher-gateway: default
labelsToWatch:
  operator.kyma-project.io/watched-by: kyma
manager: lifecycle-manager
resourceToWatch:
  group: operator.kyma-project.io
  resource: kymas
  version: v1beta2
serviceInfo:
  name: kcp-operator-events
  namespace: lifecycle-manager
  port: 8082`, toYAML(t, w.Object["spec"]))
	assert.Equal(t, "lifecycle-manager", w.GetLabels()["operator.kyma-project.io/managed-by"])

	np := objs.one(t, "NetworkPolicy")
	assert.Equal(t, `- ports:
  - port: 8080
    protocol: TCP
  - port: 8081
    protocol: TCP
- ports:
  - port: 9443
    protocol: TCP
- from:
  - namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: istio-system
    podSelector:
      matchLabels:
        istio: ingressgateway
  ports:
  - port: 8082
    protocol: TCP`, toYAML(t, field(t, np, "spec", "ingress")), "only the ingress gateway may send X-Forwarded-Client-Cert")
}

func TestCertManagerWithChartCA(t *testing.T) {
	objs := mustRender(t, certManagerValues(), "lifecycle-manager")
	args := objs.args(t)
	assert.Equal(t, "cert-manager.io/Issuer/kcp-operator-ca", args["--cert-issuer"])
	assert.Equal(t, "kcp-system/lifecycle-manager-ca", args["--cert-ca-secret"])

	ca := objs.one(t, "Certificate", "kcp-operator-ca")
	assert.Equal(t, "kcp-system", ca.GetNamespace())
	assert.Equal(t, `commonName: lifecycle-manager-ca
duration: 8760h
isCA: true
issuerRef:
  group: cert-manager.io
  kind: Issuer
  name: kcp-operator-selfsigned
privateKey:
  algorithm: ECDSA
  rotationPolicy: Always
  size: 256
renewBefore: 720h
secretName: lifecycle-manager-ca
usages:
- cert sign
- crl sign`, toYAML(t, ca.Object["spec"]))
	assert.Equal(t, map[string]any{"selfSigned": map[string]any{}}, objs.one(t, "Issuer", "kcp-operator-selfsigned").Object["spec"])
	assert.Equal(t, map[string]any{"ca": map[string]any{"secretName": "lifecycle-manager-ca"}},
		objs.one(t, "Issuer", "kcp-operator-ca").Object["spec"], "the issuer signs with the CA the operator reads")
}

func TestCertManagerWithOwnIssuer(t *testing.T) {
	v := certManagerValues()
	set(v, "certificates.certManager.issuerRef", map[string]any{"name": "platform-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
	set(v, "certificates.caSecret", map[string]any{"name": "platform-ca-keys", "namespace": "cert-manager"})
	objs := mustRender(t, v, "lifecycle-manager")
	assert.Empty(t, objs.all("Certificate"), "the chart makes no CA of its own")
	assert.Empty(t, objs.all("Issuer"))
	args := objs.args(t)
	assert.Equal(t, "cert-manager.io/ClusterIssuer/platform-ca", args["--cert-issuer"])
	assert.Equal(t, "cert-manager/platform-ca-keys", args["--cert-ca-secret"])
	assert.Contains(t, objs.kinds(), "Role cert-manager/kcp-operator", "the issuer's CA Secret is read in its namespace")
}

func TestServiceMonitorAndTwoReplicas(t *testing.T) {
	v := set(set(baseValues(), "serviceMonitor.enabled", true), "replicaCount", 2)
	set(v, "serviceMonitor.labels", map[string]any{"release": "prometheus"})
	objs := mustRender(t, v, "lifecycle-manager")
	sm := objs.one(t, "ServiceMonitor")
	assert.Equal(t, "prometheus", sm.GetLabels()["release"])
	metricsSvc := objs.one(t, "Service", "kcp-operator-metrics")
	for k, want := range field(t, sm, "spec", "selector", "matchLabels").(map[string]any) {
		assert.Equal(t, want, metricsSvc.GetLabels()[k], "the ServiceMonitor selects the metrics Service by %s", k)
	}
	assert.NotEqual(t, "metrics", objs.one(t, "Service", "kcp-operator-events").GetLabels()["app.kubernetes.io/component"])
	assert.Equal(t, `- interval: 30s
  path: /metrics
  port: metrics
  scheme: http
  scrapeTimeout: 10s`, toYAML(t, field(t, sm, "spec", "endpoints")))
	assert.EqualValues(t, 2, field(t, objs.one(t, "Deployment"), "spec", "replicas"))
	pdb := objs.one(t, "PodDisruptionBudget")
	assert.EqualValues(t, 1, field(t, pdb, "spec", "minAvailable"))
	assert.Equal(t, toYAML(t, field(t, objs.one(t, "Deployment"), "spec", "selector", "matchLabels")), toYAML(t, field(t, pdb, "spec", "selector", "matchLabels")))
	assert.Equal(t, "15s", objs.args(t)["--leader-election-lease-duration"])

	set(v, "leaderElection.leaseDuration", "6s")
	assert.Equal(t, "6s", mustRender(t, v, "lifecycle-manager").args(t)["--leader-election-lease-duration"])
	assert.Empty(t, mustRender(t, set(v, "replicaCount", 1), "lifecycle-manager").all("PodDisruptionBudget"), "one replica: no budget to keep")
}

func TestDirectMode(t *testing.T) {
	v := set(baseValues(), "listener.mode", "direct")
	set(v, "listener.service", map[string]any{"type": "NodePort", "nodePort": 30882})
	set(v, "agent.kcpAddress", "[fd00::17]:30882")
	objs := mustRender(t, v, "lifecycle-manager")
	args := objs.args(t)
	assert.Equal(t, "direct", args["--listener-mode"])
	assert.NotContains(t, args, "--listener-trusted-proxies", "no proxy is trusted when the listener terminates mTLS")
	assert.NotContains(t, args, "--istio-gateway-name", "no Istio in direct mode")
	assert.Equal(t, "lifecycle-manager", args["--cert-endpoint-namespace"], "the endpoint Secret beside the listener")
	assert.Equal(t, "fd00::17", args["--cert-endpoint-dns-names"])
	svc := objs.one(t, "Service", "kcp-operator-events")
	assert.Equal(t, `- name: https-events
  nodePort: 30882
  port: 8082
  protocol: TCP
  targetPort: listener`, toYAML(t, field(t, svc, "spec", "ports")))
	rule := field(t, objs.one(t, "NetworkPolicy"), "spec", "ingress").([]any)[1].(map[string]any)
	assert.NotContains(t, rule, "from", "agents connect from anywhere")
	assert.Equal(t, "kcp-system", objs.one(t, "Watcher").GetNamespace())
}

func TestOptionalParts(t *testing.T) {
	v := baseValues()
	set(v, "namespaces", []any{"kcp-system", "kcp-extra"})
	set(v, "image.digest", "sha256:0123abcd")
	set(v, "operator.featureGates", map[string]any{"Profiling": true, "ModuleDriftWatch": false})
	set(v, "istio.gateway.managed", false)
	set(v, "watcher.create", false)
	set(v, "grafanaDashboard.enabled", false)
	set(v, "networkPolicy.enabled", false)
	set(v, "operator.skrImagePullSecret", "runtime-registries/skr-pull")
	set(v, "operator.insecureRegistries", []any{"registry.local:5000"})
	set(v, "operator.ociRegistryHost", "registry.example.com/modules")
	set(v, "operator.ociRegistryCredSecret", "descriptors/login")
	set(v, "operator.modulesRepositorySubpath", "prod")
	set(v, "operator.extraArgs", []any{"--kyma-concurrency=16", "--requeue-success=1h"})
	objs := mustRender(t, v, "lifecycle-manager")
	for _, kind := range []string{"Watcher", "ConfigMap", "NetworkPolicy"} {
		assert.Empty(t, objs.all(kind), kind)
	}
	assert.Contains(t, objs.kinds(), "Role kcp-extra/kcp-operator", "every watched namespace gets the operator's rules")
	assert.Contains(t, objs.kinds(), "Role runtime-registries/kcp-operator", "the runtimes' pull Secret is watched in its namespace")
	assert.Contains(t, objs.kinds(), "Role descriptors/kcp-operator", "the descriptor registry's login is read in its namespace")
	c := objs.container(t)
	assert.Equal(t, "registry.example.com/kcp-operator@sha256:0123abcd", c["image"])
	args := objs.args(t)
	assert.Equal(t, "kcp-system,kcp-extra", args["--namespaces"])
	assert.Equal(t, "ModuleDriftWatch=false,Profiling=true", args["--feature-gates"])
	assert.Empty(t, args["--istio-gateway-name"], "someone else keeps the Gateway")
	assert.Contains(t, args, "--istio-gateway-name")
	assert.Equal(t, "runtime-registries/skr-pull", args["--skr-image-pull-secret"])
	assert.Equal(t, "registry.local:5000", args["--insecure-registries"])
	assert.Equal(t, "registry.example.com/modules", args["--oci-registry-host"])
	assert.Equal(t, "descriptors/login", args["--oci-registry-cred-secret"])
	assert.Equal(t, "prod", args["--modules-repository-subpath"])
	assert.Equal(t, "16", args["--kyma-concurrency"])
	assert.Equal(t, "1h", args["--requeue-success"])

	noAgent := mustRender(t, set(set(baseValues(), "agent.install", false), "agent.kcpAddress", ""), "lifecycle-manager").args(t)
	assert.NotContains(t, noAgent, "--agent-kcp-address")
	assert.NotContains(t, noAgent, "--cert-endpoint-dns-names", "no address: the endpoint certificate is not managed")
}

func TestInvalidValues(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"no KCP address for the agents", set(baseValues(), "agent.kcpAddress", ""), "agent.kcpAddress"},
		{"KCP address with a path", set(baseValues(), "agent.kcpAddress", "https://kcp.example.com/x"), "kcpAddress"},
		{"an unknown feature gate", set(baseValues(), "operator.featureGates", map[string]any{"Drift": true}), "featureGates"},
		{"unknown listener mode", set(baseValues(), "listener.mode", "mesh"), "mode"},
		{"unknown certificate backend", set(baseValues(), "certificates.backend", "vault"), "backend"},
		{"own issuer without its CA Secret", set(set(certManagerValues(), "certificates.certManager.issuerRef.name", "platform-ca"),
			"certificates.caSecret.name", ""), "certificates.caSecret.name"},
		{"chart CA in another namespace", set(certManagerValues(), "certificates.caSecret.namespace", "elsewhere"), "certificates.caSecret.namespace"},
		{"no watched namespace", set(baseValues(), "namespaces", []any{}), "namespaces"},
		{"a typo in a value", set(baseValues(), "listner", map[string]any{"mode": "direct"}), "listner"},
		{"an extra argument that is no flag", set(baseValues(), "operator.extraArgs", []any{"kyma-concurrency=4"}), "extraArgs"},
		{"a trusted proxy that is no CIDR", set(baseValues(), "listener.trustedProxies", []any{"10.0.0.1"}), "trustedProxies"},
		{"a node port out of range", set(baseValues(), "listener.service.nodePort", 8082), "nodePort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(tt.values, "lifecycle-manager")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
