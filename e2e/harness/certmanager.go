package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/certmanagertest"
)

// With Options.CertManager the operator runs in cert-manager mode as the
// kcp-operator chart installs it with certificates.backend=cert-manager:
// the real cert-manager controllers (certmanagertest) sign, the chart's own
// self-signed CA (templates/certmanager.yaml) is applied as rendered, the
// chart's RBAC of that mode binds the operator, and the operator gets the
// chart's --cert-issuer and --cert-ca-secret flags.

// certManagerStart bounds building the controllers (the first time, a few
// minutes) and starting them.
const certManagerStart = 15 * time.Minute

// certManagerCRDs are cert-manager's CRDs for the KCP in cert-manager mode.
func (h *Harness) certManagerCRDs(ctx context.Context) ([]string, error) {
	if !h.opts.CertManager {
		return nil, nil
	}
	crds, err := certmanagertest.CRDPaths(ctx)
	if err != nil {
		return nil, fmt.Errorf("cert-manager mode: %w", err)
	}
	return crds, nil
}

// setUpCertManager starts the cert-manager controllers against the KCP,
// applies the chart's cert-manager objects and waits for the CA they make;
// it keeps the chart's certificate flags for the operator.
func (h *Harness) setUpCertManager(ctx context.Context) error {
	h.progress("starting the cert-manager %s controllers against the KCP", certmanagertest.Version)
	kubeconfig, err := os.ReadFile(h.KCP.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the KCP kubeconfig: %w", err)
	}
	dir := filepath.Join(h.RunDir, "cert-manager")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cert-manager folder: %w", err)
	}
	startCtx, cancel := context.WithTimeout(ctx, certManagerStart)
	defer cancel()
	cm, err := certmanagertest.Start(startCtx, certmanagertest.Options{Kubeconfig: kubeconfig, Dir: dir, Namespace: Namespace})
	if err != nil {
		return fmt.Errorf("cert-manager mode needs the real controllers: %w", err)
	}
	h.CertManager = cm
	h.stops = append(h.stops, func() { _ = cm.Stop() })
	objs, err := RenderChart(filepath.Join(RepoRoot(), "charts", "kcp-operator"), operatorRelease, Namespace,
		operatorChartValues(true))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if !strings.HasPrefix(obj.GetAPIVersion(), "cert-manager.io/") {
			continue
		}
		if err := h.KCP.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s/%s of the kcp-operator chart: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	if h.certManagerArgs, err = chartCertArgs(objs); err != nil {
		return err
	}
	return h.waitForCA(ctx)
}

// chartCertArgs are the --cert-issuer and --cert-ca-secret flags of the
// chart's Deployment.
func chartCertArgs(objs []*unstructured.Unstructured) ([]string, error) {
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		var args []string
		for _, c := range containers {
			all, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
			for _, a := range all {
				if strings.HasPrefix(a, "--cert-issuer=") || strings.HasPrefix(a, "--cert-ca-secret=") {
					args = append(args, a)
				}
			}
		}
		if len(args) == 2 {
			return args, nil
		}
	}
	return nil, fmt.Errorf("the kcp-operator chart rendered no Deployment with --cert-issuer and --cert-ca-secret")
}

// waitForCA waits until cert-manager wrote the CA Secret the chart's CA
// Issuer signs with, so that the operator starts with a CA to trust.
func (h *Harness) waitForCA(ctx context.Context) error {
	name := ""
	for _, a := range h.certManagerArgs {
		if v, ok := strings.CutPrefix(a, "--cert-ca-secret="); ok {
			name = v
		}
	}
	ns, secret, ok := strings.Cut(name, "/")
	if !ok {
		ns, secret = Namespace, name
	}
	key := client.ObjectKey{Namespace: ns, Name: secret}
	if !waitFor(ctx, 2*time.Minute, func() bool {
		s := &corev1.Secret{}
		return h.KCP.Client.Get(ctx, key, s) == nil && len(s.Data[corev1.TLSCertKey]) > 0
	}) {
		return fmt.Errorf("cert-manager issued no CA into Secret %s within 2m; its log:\n%s", key, h.CertManager.Tail())
	}
	h.progress("cert-manager issued the chart's CA into Secret %s", key)
	return nil
}
