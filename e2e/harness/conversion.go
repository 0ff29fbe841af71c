package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The KCP serves the v1beta1 API as the chart sets it up: kcp-operator
// --upgrade-crds, run as the chart hook's ServiceAccount, serves v1beta1 and
// points the CRDs' conversion at the operator's webhook, and the operator
// serves that webhook and writes the CRDs' caBundle. The API server runs on
// this machine, so it calls a loopback URL instead of a Service.

// serveV1beta1 picks the webhook's port and runs the CRD upgrade (local mode).
func (h *Harness) serveV1beta1(ctx context.Context) error {
	port, err := FreePort(ctx)
	if err != nil {
		return err
	}
	h.WebhookAddr = portAddr(port)
	kc, err := serviceAccountKubeconfig(ctx, h.KCP, Namespace, operatorRelease+"-crd-upgrade", h.KCP.Config.Host)
	if err != nil {
		return err
	}
	path := filepath.Join(h.RunDir, "crd-upgrade.kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	h.progress("kcp-operator --upgrade-crds points the CRDs' conversion at %s", h.webhookURL())
	cmd := exec.CommandContext(ctx, h.Bin.Operator, "--upgrade-crds", "--kubeconfig="+path, "--webhook-service="+h.webhookURL())
	out, err := cmd.CombinedOutput()
	logFile := filepath.Join(h.RunDir, "logs", "crd-upgrade.log")
	if werr := os.MkdirAll(filepath.Dir(logFile), 0o755); werr == nil {
		_ = os.WriteFile(logFile, out, 0o644)
	}
	if err != nil {
		return fmt.Errorf("kcp-operator --upgrade-crds: %w\n%s", err, out)
	}
	return nil
}

func (h *Harness) webhookURL() string { return "https://" + h.WebhookAddr + "/convert" }

// webhookArgs are the operator's flags of the conversion webhook.
func (h *Harness) webhookArgs() []string {
	if h.WebhookAddr == "" {
		return nil
	}
	return []string{"--webhook-bind-address=" + h.WebhookAddr, "--webhook-service=" + h.webhookURL()}
}
