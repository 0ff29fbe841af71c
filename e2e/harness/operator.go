package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// OpenMaintenancePolicy is the harness's maintenance policy: a window open
// all week, so that no upgrade waits unless a scenario writes a policy.
const OpenMaintenancePolicy = `default: {days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], begin: "00:00", end: "00:00"}
`

// ModuleTrustSecretName is the Secret of trusted module signing keys the
// harness's operator reads (local mode); scenarios write it.
const ModuleTrustSecretName = "module-trust"

// StartOperator runs kcp-operator with its real flags: the listener in
// direct mode on loopback (no Istio locally), the certificates of the
// built-in CA, and resyncs hours away, so that runtime changes arrive by
// push or not at all.
func (h *Harness) StartOperator(ctx context.Context) error {
	if !h.Local {
		return h.scaleOperator(ctx, 1)
	}
	if h.Operator == nil {
		if err := h.configureOperator(ctx); err != nil {
			return err
		}
	}
	h.progress("starting kcp-operator (listener on %s, metrics on %s)", h.ListenerAddr, h.MetricsAddr)
	if err := h.Operator.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	if !waitFor(ctx, 2*time.Minute, func() bool { return h.operatorHealthy(ctx) }) {
		return fmt.Errorf("kcp-operator did not become healthy; its log:\n%s", h.Operator.Tail(8000))
	}
	return nil
}

// StopOperator stops the operator process (and so the listener); in
// clusters mode it scales the operator's Deployment to zero.
func (h *Harness) StopOperator(ctx context.Context) error {
	if !h.Local {
		return h.scaleOperator(ctx, 0)
	}
	return h.Operator.Stop()
}

func (h *Harness) configureOperator(ctx context.Context) error {
	var ports [3]int
	for i := range ports {
		p, err := FreePort(ctx)
		if err != nil {
			return err
		}
		ports[i] = p
	}
	h.ListenerAddr = "localhost:" + strconv.Itoa(ports[0])
	h.MetricsAddr = portAddr(ports[1])
	args := []string{
		"--kubeconfig=" + h.operatorKubeconfig(),
		"--namespaces=" + Namespace,
		"--leader-election-lease-duration=0",
		"--metrics-bind-address=" + h.MetricsAddr,
		"--health-probe-bind-address=" + portAddr(ports[2]),
		"--listener-bind-address=" + portAddr(ports[0]),
		"--listener-mode=direct",
		"--agent-kcp-address=" + h.ListenerAddr,
		"--agent-image=skr-agent:local",
		"--cert-namespace=" + Namespace,
		"--cert-endpoint-namespace=" + Namespace,
		"--cert-endpoint-dns-names=localhost",
		// A CA rotation's steps: trust 1.25s, switch the endpoint 15s after.
		"--cert-propagation-delay=1250ms",
		"--requeue-success=10h",
		"--requeue-busy=1s",
		"--requeue-error=2s",
		"--purge-grace-period=20s",
		"--zap-log-level=info",
		// The runtimes' agents run on this machine: each Kyma points its
		// webhooks at its agent's loopback port by annotation.
		"--agent-webhook-url-allowed-hosts=127.0.0.1",
	}
	args = append(args, h.webhookArgs()...)
	args = append(args, h.certManagerArgs...) // the chart's, in cert-manager mode
	h.MaintenancePolicy = filepath.Join(h.RunDir, "maintenance-policy.yaml")
	if err := os.WriteFile(h.MaintenancePolicy, []byte(OpenMaintenancePolicy), 0o600); err != nil {
		return fmt.Errorf("writing the maintenance policy: %w", err)
	}
	args = append(args, "--maintenance-policy="+h.MaintenancePolicy)
	// Module signatures are checked only for Kymas that raise the policy
	// by label (suite/07_signed_modules_test.go), against this Secret.
	h.ModuleTrustSecret = Namespace + "/" + ModuleTrustSecretName
	args = append(args, "--module-signature-policy=off", "--module-trust-secret="+h.ModuleTrustSecret)
	if host, _, _ := strings.Cut(h.Registry, "/"); host != "" {
		// The harness's registry serves plain HTTP: only a listed registry is.
		args = append(args, "--insecure-registries="+host)
		// modulectl writes templates with descriptor: {}; the descriptors
		// are read where it pushed them.
		args = append(args, "--oci-registry-host="+h.Registry)
	}
	h.Operator = &Process{
		Name: "kcp-operator", Bin: h.Bin.Operator, Log: filepath.Join(h.RunDir, "logs", "kcp-operator.log"),
		Args: append(args, h.opts.OperatorArgs...),
		// The layer cache is under TMPDIR: one per run.
		Env: []string{"TMPDIR=" + h.tmpDir("kcp-operator")},
	}
	return nil
}

// operatorKubeconfig is the chart's ServiceAccount's (local mode), else the
// KCP's kubeconfig.
func (h *Harness) operatorKubeconfig() string {
	if h.OperatorKubeconfig != "" {
		return h.OperatorKubeconfig
	}
	return h.KCP.Kubeconfig
}

func (h *Harness) operatorHealthy(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.MetricsAddr+"/metrics", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// tmpDir is a process's TMPDIR under the run directory, where the operator
// keeps its layer cache.
func (h *Harness) tmpDir(name string) string {
	dir := filepath.Join(h.RunDir, "tmp", name)
	_ = os.MkdirAll(dir, 0o755) // a process that cannot use it says so in its log
	return dir
}
