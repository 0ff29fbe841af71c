package setup_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/setup"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// The push-path suite: the whole operator with its listener in direct
// mode (mTLS on loopback), a runtime API server, and the real skr-agent
// binary, started by the suite with the certificate the operator put into
// the runtime, as a kubelet would start the Pod. Resyncs are hours away:
// only the push path can explain a reaction.
var (
	kcp, runtimeEnv *testenv.Env
	reg             *testmodule.Registry
	op              *setup.Operator
	metrics         *prometheus.Registry
	listenerPort    int
	kubelet         *agentKubelet
	// kcpWriteDelay slows the operator's KCP writes for the tests that
	// need a busy KCP (headroom_test.go); 0 otherwise.
	kcpWriteDelay = &delayedWrites{}
)

const (
	ns          = "kcp-system"
	kymaName    = "pushed"
	runtimeID   = "runtime-pushed"
	statusWatch = "status-watch"
	timeout     = 60 * time.Second
	tick        = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "push suite:", err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	scheme, err := setup.Scheme()
	if err != nil {
		return 1, err
	}
	if kcp, err = testenv.Start(testenv.Options{Scheme: scheme}); err != nil {
		return 1, err
	}
	defer func() { _ = kcp.Stop() }()
	if runtimeEnv, err = testenv.Start(testenv.Options{WithoutAPICRDs: true}); err != nil {
		return 1, err
	}
	defer func() { _ = runtimeEnv.Stop() }()
	reg = testmodule.StartRegistry()
	defer reg.Close()

	dir, err := os.MkdirTemp("", "push-suite-")
	if err != nil {
		return 1, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	agentBin, err := buildAgent(dir)
	if err != nil {
		return 1, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := prepareKCP(ctx); err != nil {
		return 1, err
	}
	webhookPort, err := freePort()
	if err != nil {
		return 1, err
	}
	done, err := startOperator(ctx, dir, webhookPort)
	if err != nil {
		return 1, err
	}
	kubelet = &agentKubelet{bin: agentBin, dir: dir, webhookPort: webhookPort, namespace: shared.DefaultRuntimeNamespace}
	go kubelet.run(ctx)
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- agent log\n%s\n", kubelet.logs())
	}
	cancel()
	kubelet.stop()
	<-done
	return code, nil
}

func buildAgent(dir string) (string, error) {
	bin := filepath.Join(dir, "skr-agent")
	cmd := exec.CommandContext(context.Background(), "go", "build", "-o", bin, "./cmd/skr-agent")
	cmd.Dir = filepath.Join("..", "..", "..", "skr-agent")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the agent: %w: %s", err, out)
	}
	return bin, nil
}

func prepareKCP(ctx context.Context) error {
	if err := kcp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	w := &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Name: "klm-watcher", Namespace: ns},
		Spec: v1beta2.WatcherSpec{
			Manager:         setup.KymaManager,
			ServiceInfo:     v1beta2.Service{Name: "klm-events", Namespace: ns, Port: 8082},
			ResourceToWatch: v1beta2.WatchableGVR{Group: "operator.kyma-project.io", Version: "v1beta2", Resource: "kymas"},
			LabelsToWatch:   map[string]string{shared.WatchedByLabel: shared.WatchedByKymaValue},
			Field:           v1beta2.FieldSpec,
			Gateway:         v1beta2.GatewayConfig{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		},
	}
	return kcp.Client.Create(ctx, w)
}

func startOperator(ctx context.Context, dir string, webhookPort int) (<-chan struct{}, error) {
	var err error
	if listenerPort, err = freePort(); err != nil {
		return nil, err
	}
	opts := options.Default()
	opts.Namespaces = []string{ns}
	opts.LeaderElect = false
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.RequeueSuccess, opts.RequeueNoPush = 10*time.Hour, 10*time.Hour
	opts.RequeueBusy, opts.RequeueError = 500*time.Millisecond, time.Second
	opts.RequeueBusyMax = 5 * time.Second
	opts.WatcherController = false
	opts.LayerCacheDir = filepath.Join(dir, "layers")
	opts.InsecureRegistries = []string{reg.Host} // the suite's registry: plain HTTP on loopback
	opts.ListenerAddr = "127.0.0.1:" + strconv.Itoa(listenerPort)
	opts.ListenerMode = "direct"
	opts.ListenerManagers = []string{statusWatch}
	opts.ListenerRuntimeRate, opts.ListenerRuntimeBurst = suiteRuntimeRate, suiteRuntimeBurst
	opts.AgentKCPAddress = "localhost:" + strconv.Itoa(listenerPort)
	opts.AgentWebhookURL = "https://127.0.0.1:" + strconv.Itoa(webhookPort)
	opts.AgentImage = "skr-agent:test"

	certOpts := config.Defaults()
	certOpts.Namespace = ns
	certOpts.EndpointNamespace = ns
	certOpts.EndpointDNSNames = []string{"localhost"}
	certOpts.PropagationDelay, certOpts.GracePeriod, certOpts.RotationInterval = 2*time.Second, 5*time.Second, time.Second

	log := funcr.New(func(prefix, args string) {
		if os.Getenv("TEST_OPERATOR_LOGS") != "" {
			fmt.Fprintln(os.Stderr, prefix, args)
		}
	}, funcr.Options{Verbosity: 1})
	ctrl.SetLogger(log)
	metrics = prometheus.NewRegistry()
	cfg := rest.CopyConfig(kcp.Config)
	cfg.Wrap(kcpWriteDelay.wrap)
	if op, err = setup.New(ctx, cfg, opts, certOpts, metrics, log); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := op.Manager.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "operator stopped:", err)
		}
	}()
	kubeconfig, err := runtimeEnv.Kubeconfig("lifecycle-manager", "system:masters")
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + kymaName, Namespace: ns, Labels: map[string]string{shared.KymaNameLabel: kymaName}},
		Data:       map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}
	if err := kcp.Client.Create(ctx, secret); err != nil {
		return nil, err
	}
	kyma := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: kymaName, Namespace: ns, Labels: map[string]string{shared.RuntimeIDLabel: runtimeID}},
		Spec:       v1beta2.KymaSpec{Channel: "regular"},
	}
	return done, kcp.Client.Create(ctx, kyma)
}

func freePort() (int, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// agentKubelet does for the agent what the kubelet does for its Pod: it
// mounts the agent's Secret as files (and updates them when the Secret
// changes), runs the binary, and reports the Deployment available.
type agentKubelet struct {
	bin, dir    string
	webhookPort int
	namespace   string

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  bytes.Buffer
	data map[string][]byte
}

func (k *agentKubelet) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		secret := &corev1.Secret{}
		if err := runtimeEnv.Client.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: "skr-agent-tls"}, secret); err != nil {
			continue
		}
		if err := k.mount(secret.Data); err != nil {
			fmt.Fprintln(os.Stderr, "kubelet:", err)
			continue
		}
		k.startOnce(ctx)
		_ = testmodule.MarkAvailable(ctx, runtimeEnv.Client, k.namespace, agent.Fullname(k.namespace))
	}
}

func (k *agentKubelet) mount(data map[string][]byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, key := range []string{"ca.crt", "tls.crt", "tls.key"} {
		if bytes.Equal(k.data[key], data[key]) {
			continue
		}
		tmp := filepath.Join(k.dir, key+".tmp")
		if err := os.WriteFile(tmp, data[key], 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(k.dir, key)); err != nil {
			return err
		}
	}
	k.data = data
	return nil
}

func (k *agentKubelet) startOnce(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cmd != nil {
		return
	}
	metricsPort, err := freePort()
	if err != nil {
		return
	}
	cmd := exec.CommandContext(ctx, k.bin, "--log-level=debug", "--cert-reload-interval=200ms", "--bind-address=127.0.0.1")
	cmd.Env = append(os.Environ(),
		"KCP_ADDR=localhost:"+strconv.Itoa(listenerPort), "KCP_CONTRACT=v2",
		"CA_CERT="+filepath.Join(k.dir, "ca.crt"), "TLS_CERT="+filepath.Join(k.dir, "tls.crt"), "TLS_KEY="+filepath.Join(k.dir, "tls.key"),
		"WEBHOOK_PORT="+strconv.Itoa(k.webhookPort), "METRICS_PORT="+strconv.Itoa(metricsPort))
	cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &k.mu, w: &k.out}, &lockedWriter{mu: &k.mu, w: &k.out}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet: starting the agent:", err)
		return
	}
	k.cmd = cmd
}

func (k *agentKubelet) stop() {
	k.mu.Lock()
	cmd := k.cmd
	k.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

func (k *agentKubelet) logs() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.out.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
