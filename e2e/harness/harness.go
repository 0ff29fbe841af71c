package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/certmanagertest"
)

// Namespace is the operator's namespace in the KCP.
const Namespace = "kcp-system"

// Options configure a harness.
type Options struct {
	// RunDir holds binaries, kubeconfigs, certificates and logs; default a
	// new temporary folder.
	RunDir string
	// Runtimes is the number of local runtime clusters (default 1).
	Runtimes int
	// OperatorArgs are added to the operator's flags.
	OperatorArgs []string
	// Progress receives one line per step; nil is quiet.
	Progress func(format string, args ...any)
	// CertManager runs the operator in cert-manager mode against the real
	// cert-manager controllers (local mode; see certmanager.go).
	CertManager bool
}

// Harness is a running KCP with runtimes, operator and agents.
type Harness struct {
	RunDir   string
	Local    bool
	KCP      *Cluster
	Runtimes []*Runtime
	Registry string
	Bin      Binaries
	Operator *Process
	// OperatorKubeconfig is the operator's kubeconfig in local mode: a token
	// of charts/kcp-operator's ServiceAccount (see rbac.go).
	OperatorKubeconfig string
	// ListenerAddr is where agents send events: host:port, whose host the
	// listener's certificate names.
	ListenerAddr string
	// MetricsAddr serves the operator's metrics.
	MetricsAddr string
	// WebhookAddr serves the operator's CRD conversion webhook (the v1beta1
	// API; local mode, see conversion.go).
	WebhookAddr string
	// MaintenancePolicy is the operator's --maintenance-policy file (local
	// mode; empty in clusters mode). It starts as OpenMaintenancePolicy; a
	// scenario may write its own, which the operator reads again.
	MaintenancePolicy string
	// ModuleTrustSecret (namespace/name) holds the operator's trusted module
	// signing keys (local mode; empty in clusters mode, where the chart's
	// operator has none).
	ModuleTrustSecret string
	// CertManager runs cert-manager's controllers (Options.CertManager).
	CertManager *certmanagertest.Controllers

	opts            Options
	certManagerArgs []string
	stops           []func()
	kubelets        context.CancelFunc
}

// Runtime is a runtime cluster with its Kyma in the KCP.
type Runtime struct {
	*Cluster
	// KymaName and RuntimeID of the runtime's Kyma.
	KymaName, RuntimeID string
	// Proxy is the operator's way to the runtime's API server (local mode).
	Proxy *Proxy
	// AgentPort is where the runtime's API server calls the agent.
	AgentPort int
	// AgentMetricsPort serves the agent's metrics on loopback, the same
	// for every agent process, so that a scraper keeps its target.
	AgentMetricsPort int
	// accessKubeconfig is what the runtime's access Secret holds in local
	// mode: a token of charts/kcp-operator-runtime's ServiceAccount.
	accessKubeconfig []byte
	// agent is read by scenarios (KillAgent) while the kubelet replaces it.
	agentMu sync.Mutex
	agent   *Process
	sample  *Process
	// agentKCPAddr, when set, is the agent's KCP address instead of its
	// Deployment's (RouteAgentThroughProxy).
	agentKCPAddr atomic.Pointer[string]
}

func (h *Harness) progress(format string, args ...any) {
	if h.opts.Progress != nil {
		h.opts.Progress(format, args...)
	}
}

// New starts everything: in clusters mode when E2E_KCP_KUBECONFIG and
// E2E_SKR_KUBECONFIG are set, else locally.
func New(ctx context.Context, opts Options) (h *Harness, err error) {
	if opts.Runtimes < 1 {
		opts.Runtimes = 1
	}
	if opts.RunDir == "" {
		if opts.RunDir, err = os.MkdirTemp("", "lifecycle-manager-e2e-"); err != nil {
			return nil, err
		}
	}
	h = &Harness{RunDir: opts.RunDir, opts: opts}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	kcpKC, skrKC := os.Getenv("E2E_KCP_KUBECONFIG"), os.Getenv("E2E_SKR_KUBECONFIG")
	if kcpKC != "" && skrKC != "" {
		return h, h.useClusters(ctx, kcpKC, skrKC)
	}
	h.Local = true
	if err := h.startLocal(ctx); err != nil {
		return h, err
	}
	return h, nil
}

func (h *Harness) startLocal(ctx context.Context) error {
	h.progress("building kcp-operator, skr-agent, modulectl and the sample module's operator")
	var err error
	if h.Bin, err = Build(ctx, filepath.Join(h.RunDir, "bin")); err != nil {
		return err
	}
	h.progress("starting the KCP and %d runtime control plane(s) (kube-apiserver + etcd)", h.opts.Runtimes)
	audit, err := auditFlags(h.RunDir, "kcp")
	if err != nil {
		return err
	}
	crds, err := h.certManagerCRDs(ctx)
	if err != nil {
		return err
	}
	if h.KCP, err = StartCluster("kcp", h.RunDir, testenv.Options{APIServerFlags: audit, CRDPaths: crds}); err != nil {
		return err
	}
	h.stops = append(h.stops, func() { _ = h.KCP.Stop() })
	for i := 1; i <= h.opts.Runtimes; i++ {
		if err := h.startRuntime(ctx, i); err != nil {
			return err
		}
	}
	host, stop := StartRegistry()
	h.Registry = host + "/modules"
	h.stops = append(h.stops, stop)
	h.progress("module registry at %s", host)
	if err := h.prepareKCP(ctx); err != nil {
		return err
	}
	if err := h.installOperatorRBAC(ctx); err != nil {
		return err
	}
	if h.opts.CertManager {
		if err := h.setUpCertManager(ctx); err != nil {
			return err
		}
	}
	if err := h.serveV1beta1(ctx); err != nil {
		return err
	}
	if err := h.publishSample(ctx); err != nil {
		return err
	}
	if err := h.StartOperator(ctx); err != nil {
		return err
	}
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.kubelets = cancel
	for _, rt := range h.Runtimes {
		go h.kubelet(kctx, rt)
	}
	return nil
}

func (h *Harness) startRuntime(ctx context.Context, i int) error {
	name := fmt.Sprintf("runtime-%d", i)
	audit, err := auditFlags(h.RunDir, name)
	if err != nil {
		return err
	}
	c, err := StartCluster(name, h.RunDir, testenv.Options{WithoutAPICRDs: true, APIServerFlags: audit})
	if err != nil {
		return err
	}
	h.stops = append(h.stops, func() { _ = c.Stop() })
	addr, err := c.serverAddr()
	if err != nil {
		return err
	}
	proxy, err := NewProxy(context.WithoutCancel(ctx), addr)
	if err != nil {
		return err
	}
	h.stops = append(h.stops, proxy.Close)
	ports, err := FreePorts(ctx, 2)
	if err != nil {
		return err
	}
	rt := &Runtime{
		Cluster: c, KymaName: fmt.Sprintf("kyma-%d", i), RuntimeID: name,
		Proxy: proxy, AgentPort: ports[0], AgentMetricsPort: ports[1],
	}
	h.Runtimes = append(h.Runtimes, rt)
	return h.installRuntimeAccess(ctx, rt, "https://"+proxy.Addr)
}

// prepareKCP creates the operator's namespace and the Watcher of runtime Kymas.
func (h *Harness) prepareKCP(ctx context.Context) error { return PrepareKCP(ctx, h.KCP.Client) }

// PrepareKCP creates the operator's namespace and the Watcher of the
// runtime Kymas (the push path's default watch), as the KCP chart does.
func PrepareKCP(ctx context.Context, c client.Client) error {
	return prepareNamespace(ctx, c, Namespace)
}

// prepareNamespace creates an operator's namespace with its Watcher.
func prepareNamespace(ctx context.Context, c client.Client, namespace string) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	return c.Create(ctx, &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Name: "klm-watcher", Namespace: namespace},
		Spec: v1beta2.WatcherSpec{
			Manager:         "lifecycle-manager",
			ServiceInfo:     v1beta2.Service{Name: "lifecycle-manager-events", Namespace: namespace, Port: 8082},
			ResourceToWatch: v1beta2.WatchableGVR{Group: "operator.kyma-project.io", Version: "v1beta2", Resource: "kymas"},
			LabelsToWatch:   map[string]string{shared.WatchedByLabel: shared.WatchedByKymaValue},
			Field:           v1beta2.FieldSpec,
			Gateway: v1beta2.GatewayConfig{LabelSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{shared.WatcherGatewayLabel: shared.WatcherGatewayDefault}}},
		},
	})
}

// Close stops everything the harness started, in reverse order.
func (h *Harness) Close() {
	if h.kubelets != nil {
		h.kubelets()
	}
	for _, rt := range h.Runtimes {
		for _, p := range []*Process{rt.agentProcess(), rt.sample} {
			if p != nil {
				_ = p.Stop()
			}
		}
	}
	if h.Operator != nil {
		_ = h.Operator.Stop()
	}
	for i := len(h.stops) - 1; i >= 0; i-- {
		h.stops[i]()
	}
}

// Logs returns the end of every process's log, for failed scenarios.
func (h *Harness) Logs() string {
	out := ""
	procs := []*Process{h.Operator}
	for _, rt := range h.Runtimes {
		procs = append(procs, rt.agentProcess(), rt.sample)
	}
	for _, p := range procs {
		if p != nil {
			out += fmt.Sprintf("\n----- %s (%s)\n%s", p.Name, p.Log, p.Tail(20000))
		}
	}
	return out
}

func portAddr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// waitFor polls cond until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}
