package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/lifecycle-manager/e2e/harness"
)

// operator is kcp-operator run as a separate process.
type operator struct {
	*harness.Process
	MetricsAddr string
	// Shard is the operator's --shard; empty when the run has one operator.
	Shard string
	// Profiled serves pprof beside the metrics.
	Profiled bool
}

// StartOperator runs kcp-operator with production defaults, or with
// Shards > 1 one instance per shard (ShardNames), each with its own
// Lease, listener and metrics, after writing the shard list. Only what a
// machine without pods and Istio needs differs: the kubeconfig, loopback
// addresses and the listener in direct mode (no VirtualServices to write).
// --fan-out-rate is the run's release rate.
func (f *Fleet) StartOperator(ctx context.Context) error {
	names := []string{""}
	if f.opts.Shards > 1 {
		names = ShardNames(f.opts.Shards)
		if err := f.writeShardList(ctx, names); err != nil {
			return err
		}
	}
	for _, name := range names {
		op, err := f.startOperator(ctx, name)
		if err != nil {
			return err
		}
		f.Operators = append(f.Operators, op)
	}
	f.Operator = f.Operators[0]
	for _, op := range f.Operators {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			if !op.Running() {
				return false, errors.New("it exited")
			}
			return op.healthy(ctx), nil
		})
		if err != nil {
			return fmt.Errorf("%s did not become healthy (%w); its log:\n%s", op.Name, err, op.Tail(8000))
		}
	}
	return nil
}

// ShardNames are the shards of a run with n of them: s0 (the coordinator,
// which assigns the Kymas) to s<n-1>.
func ShardNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "s" + strconv.Itoa(i)
	}
	return names
}

// writeShardList writes the ConfigMap the shards read their list from.
func (f *Fleet) writeShardList(ctx context.Context, names []string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: harness.ShardsConfigMap},
		Data:       map[string]string{"shards": strings.Join(names, ",")},
	}
	if err := f.kcp.Create(ctx, cm); err != nil {
		return fmt.Errorf("writing the shard list: %w", err)
	}
	return nil
}

// StopOperators stops every operator process.
func (f *Fleet) StopOperators() error {
	var errs []error
	for _, op := range f.Operators {
		if err := op.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", op.Name, err))
		}
	}
	return errors.Join(errs...)
}

// startOperator starts one kcp-operator; shard is its --shard or empty.
func (f *Fleet) startOperator(ctx context.Context, shard string) (*operator, error) {
	name := "kcp-operator"
	if shard != "" {
		name += "-" + shard
	}
	tmp := filepath.Join(f.opts.RunDir, "tmp", name)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("creating the operator's TMPDIR: %w", err)
	}
	ports := make([]int, 3)
	for i := range ports {
		p, err := f.freePort(ctx)
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	loop := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	op := &operator{MetricsAddr: loop(ports[0]), Shard: shard}
	args := []string{
		"--kubeconfig=" + f.KCP.Kubeconfig,
		"--namespaces=" + Namespace,
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
	if shard == "" {
		args = append(args, "--leader-election-lease-duration=0")
	} else {
		// A shard elects on its own Lease with the default lease.
		args = append(args, "--shard="+shard)
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
		Name: name, Bin: f.Bin.Operator, Log: filepath.Join(f.opts.RunDir, "logs", name+".log"),
		Args: append(args, f.opts.OperatorArgs...),
		// The layer cache is under TMPDIR.
		Env: []string{"TMPDIR=" + tmp},
	}
	if err := op.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	return op, nil
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
