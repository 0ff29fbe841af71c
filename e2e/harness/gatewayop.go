package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// GatewayOperatorRelease is the release name of the second operator's
// chart RBAC, beside the suite's operator (operatorRelease).
const GatewayOperatorRelease = "kcp-operator-istio"

// StartGatewayOperator runs a second kcp-operator with the listener in
// gateway mode, as charts/kcp-operator configures it by default, watching
// only namespace (which it creates): its Watcher controller keeps the
// event Gateway (hosts: host) and one VirtualService per Watcher there,
// and its certificates put the endpoint Secret into istio-system. It runs
// as the ServiceAccount of that chart rendered in gateway mode, so the
// suite's audit check covers its writes. The suite's own operator stays in
// direct mode: agents keep sending events to its listener, and neither
// operator sees the other's namespace. No agent is installed by this one.
func (h *Harness) StartGatewayOperator(ctx context.Context, namespace, host string) (*Process, error) {
	if err := ensureNamespace(ctx, h.KCP.Client, namespace); err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, h.KCP.Client, IstioNamespace); err != nil {
		return nil, err
	}
	sa, err := installChartRBAC(ctx, h.KCP, "kcp-operator", GatewayOperatorRelease, namespace, map[string]any{
		"namespaces":   []any{namespace},
		"listener":     map[string]any{"mode": "gateway"},
		"agent":        map[string]any{"install": false},
		"certificates": map[string]any{"endpoint": map[string]any{"dnsNames": []any{host}}},
	})
	if err != nil {
		return nil, err
	}
	kc, err := serviceAccountKubeconfig(ctx, h.KCP, namespace, sa, h.KCP.Config.Host)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(h.RunDir, GatewayOperatorRelease+".kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", kubeconfig, err)
	}
	ports, err := FreePorts(ctx, 3)
	if err != nil {
		return nil, err
	}
	metrics := portAddr(ports[1])
	p := &Process{
		Name: GatewayOperatorRelease, Bin: h.Bin.Operator, Log: filepath.Join(h.RunDir, "logs", GatewayOperatorRelease+".log"),
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--namespaces=" + namespace,
			"--leader-election-lease-duration=0",
			"--listener-bind-address=" + portAddr(ports[0]),
			"--metrics-bind-address=" + metrics,
			"--health-probe-bind-address=" + portAddr(ports[2]),
			// The chart's defaults in gateway mode.
			"--listener-mode=gateway",
			"--istio-gateway-name=lifecycle-manager-events",
			"--cert-namespace=" + namespace,
			"--cert-endpoint-namespace=" + IstioNamespace,
			"--cert-endpoint-dns-names=" + host,
			"--requeue-error=2s",
		},
		Env: []string{"TMPDIR=" + h.tmpDir(GatewayOperatorRelease)},
	}
	if err := p.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	if !waitFor(ctx, 2*time.Minute, func() bool { return httpOK(ctx, "http://"+metrics+"/metrics") }) {
		_ = p.Stop()
		return nil, fmt.Errorf("the gateway-mode kcp-operator did not become healthy; its log:\n%s", p.Tail(8000))
	}
	return p, nil
}
