package fleet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/lifecycle-manager/e2e/harness"
)

// operator is kcp-operator run as a separate process.
type operator struct {
	*harness.Process
	MetricsAddr string
	// Profiled serves pprof beside the metrics.
	Profiled bool
}

// StartOperator runs kcp-operator with production defaults. Only what a
// machine without pods and Istio needs differs: the kubeconfig, loopback
// addresses and the listener in direct mode (no VirtualServices to write).
// --fan-out-rate is the run's release rate.
func (f *Fleet) StartOperator(ctx context.Context) error {
	tmp := filepath.Join(f.opts.RunDir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("creating the operator's TMPDIR: %w", err)
	}
	ports := make([]int, 3)
	for i := range ports {
		p, err := f.freePort(ctx)
		if err != nil {
			return err
		}
		ports[i] = p
	}
	loop := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	op := &operator{MetricsAddr: loop(ports[0])}
	args := []string{
		"--kubeconfig=" + f.KCP.Kubeconfig,
		"--namespaces=" + Namespace,
		"--leader-election-lease-duration=0",
		"--metrics-bind-address=" + op.MetricsAddr,
		"--health-probe-bind-address=" + loop(ports[1]),
		"--listener-bind-address=" + loop(ports[2]),
		"--listener-mode=direct",
		"--agent-kcp-address=localhost:" + strconv.Itoa(ports[2]),
		"--agent-image=skr-agent:local",
		"--cert-namespace=" + Namespace,
		"--cert-endpoint-namespace=" + Namespace,
		"--cert-endpoint-dns-names=localhost",
		"--fan-out-rate=" + strconv.FormatFloat(f.opts.ReleaseRate, 'g', -1, 64),
		"--requeue-success=" + f.opts.ResyncInterval.String(),
		// The agents run on this machine, each Kyma names its loopback port.
		"--agent-webhook-url-allowed-hosts=127.0.0.1",
	}
	if host, _, _ := strings.Cut(f.Registry, "/"); host != "" {
		// The fleet's registry serves plain HTTP: only a listed registry is.
		args = append(args, "--insecure-registries="+host)
		// modulectl writes templates with descriptor: {}; the descriptors
		// are read where it pushed them.
		args = append(args, "--oci-registry-host="+f.Registry)
	}
	if f.opts.ProfileSeconds > 0 {
		// pprof is served beside the metrics.
		op.Profiled = true
		args = append(args, "--feature-gates=Profiling=true")
	}
	op.Process = &harness.Process{
		Name: "kcp-operator", Bin: f.Bin.Operator, Log: filepath.Join(f.opts.RunDir, "logs", "kcp-operator.log"),
		Args: append(args, f.opts.OperatorArgs...),
		// The layer cache is under TMPDIR.
		Env: []string{"TMPDIR=" + tmp},
	}
	f.Operator = op
	if err := op.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !op.healthy(ctx) {
		if time.Now().After(deadline) || !op.Running() {
			return fmt.Errorf("kcp-operator did not become healthy; its log:\n%s", op.Tail(8000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func (op *operator) healthy(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+op.MetricsAddr+"/metrics", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// profileCPU saves CPU profiles of the operator (while it runs), the KCP
// API server and the first runtime API server over the next seconds into
// OutDir/<who>-name in the background, starting after a delay unless ctx
// ends first; it does nothing without ProfileSeconds.
func (f *Fleet) profileCPU(ctx context.Context, name string, after time.Duration) {
	if f.opts.ProfileSeconds == 0 || f.Operator == nil || !f.Operator.Profiled {
		return
	}
	query := fmt.Sprintf("/debug/pprof/profile?seconds=%d", f.opts.ProfileSeconds)
	type target struct {
		url string
		cfg *rest.Config
	}
	targets := map[string]target{
		"kcp-apiserver":     {strings.TrimSuffix(f.KCP.Config.Host, "/") + query, f.KCP.Config},
		"runtime-apiserver": {strings.TrimSuffix(f.Servers[0].Config.Host, "/") + query, f.Servers[0].Config},
	}
	if f.Operator.Running() {
		targets["operator"] = target{"http://" + f.Operator.MetricsAddr + query, nil}
	}
	for who, t := range targets {
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(after):
			}
			hc := http.DefaultClient
			if t.cfg != nil {
				var err error
				if hc, err = rest.HTTPClientFor(t.cfg); err != nil {
					f.opts.Progress("profile %s: %v", who, err)
					return
				}
			}
			if err := download(ctx, hc, t.url, filepath.Join(f.opts.OutDir, who+"-"+name)); err != nil {
				f.opts.Progress("profile %s %s: %v", who, name, err)
			}
		}()
	}
}

func download(ctx context.Context, hc *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
