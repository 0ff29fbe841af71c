package kyma_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/setup"
)

// The suite runs the whole operator against two real API servers: the KCP
// and one runtime that every test shares, each test in its own runtime
// namespace (the sync-namespace annotation), as the scale harness does.
var (
	kcp, runtimeEnv *testenv.Env
	runtimeConfig   []byte
	metricsRegistry *prometheus.Registry
	// operatorClient reads through the operator's cache, with its indexes.
	operatorClient client.Client
	layerCacheDir  string
)

const (
	// purgeGrace is longer than a module removal takes under -race on 2 busy
	// cores, so that tests of a deletion see the deletion and not the purge.
	purgeGrace   = 20 * time.Second
	kcpNamespace = "kcp-system"
	timeout      = 60 * time.Second // under -race on 2 busy cores a catalog pass behind many Kymas takes tens of seconds
	tick         = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		code = 1
	}
	os.Exit(code)
}

func runSuite(m *testing.M) (int, error) {
	istio, err := istioCRDs()
	if err != nil {
		return 1, err
	}
	scheme, err := setup.Scheme()
	if err != nil {
		return 1, err
	}
	if kcp, err = testenv.Start(testenv.Options{CRDs: istio, Scheme: scheme}); err != nil {
		return 1, err
	}
	defer func() { _ = kcp.Stop() }()
	if runtimeEnv, err = testenv.Start(testenv.Options{WithoutAPICRDs: true}); err != nil {
		return 1, err
	}
	defer func() { _ = runtimeEnv.Stop() }()
	if runtimeConfig, err = runtimeEnv.Kubeconfig("lifecycle-manager", "system:masters"); err != nil {
		return 1, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := kcp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcpNamespace}}); err != nil {
		return 1, err
	}
	if err := kcp.Client.Create(ctx, pullSecretSource()); err != nil {
		return 1, err
	}
	stopRegistry := startRegistry()
	defer stopRegistry()
	if layerCacheDir, err = os.MkdirTemp("", "layer-cache-"); err != nil {
		return 1, err
	}
	defer func() { _ = os.RemoveAll(layerCacheDir) }()
	done, err := startOperator(ctx, kcp)
	if err != nil {
		return 1, err
	}
	code := m.Run()
	cancel()
	<-done
	return code, nil
}

// testOptions are production options with short intervals where a test
// would otherwise wait, and a success resync long enough that only events
// can explain a reaction.
func testOptions() options.Options {
	opts := options.Default()
	opts.Namespaces = []string{kcpNamespace}
	opts.LeaderElect = false
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.RequeueSuccess = time.Hour
	opts.RequeueBusy, opts.RequeueBusyMax = 500*time.Millisecond, 5*time.Second
	opts.RequeueError = time.Second
	opts.RequeueWarning = time.Second
	// The suite's API servers share 2 cores with -race builds: a fan-out
	// slowed for their latency would only make tests wait. internal/schedule
	// and the setup suite test the slowing.
	opts.FanOutLatencyTarget = 0
	opts.RuntimeTimeout = 5 * time.Second
	opts.RateLimiterMaxDelay = 2 * time.Second
	opts.PurgeGracePeriod = purgeGrace
	opts.GatewayName = "events-gateway"
	opts.LayerCacheDir = layerCacheDir
	// Signatures are checked only for Kymas that raise the policy by label
	// (signature_test.go), against the Secret those tests create.
	opts.ModuleSignaturePolicy, opts.ModuleTrustSecret = "off", kcpNamespace+"/"+trustSecret
	opts.MaintenancePolicy = maintenancePolicy
	opts.ModulePrivileged = []string{privilegedModule}
	opts.SKRImagePullSecret = pullSecret // pullsecret_test.go
	if reg != nil {
		// The suite's registry serves plain HTTP on loopback: listed, as
		// plain HTTP is only for listed registries.
		opts.InsecureRegistries = []string{reg.Host}
		// Templates without a descriptor (descriptors_test.go) read it
		// where testmodule pushes component versions.
		opts.DescriptorRegistry = options.DescriptorRegistry{Host: reg.Host, SubPath: "modules"}
	}
	// This suite tests the operator without the push path (a Kyma is then
	// nudged where the push path would enqueue it); internal/pushpath tests it.
	opts.AgentKCPAddress = ""
	opts.ListenerAddr = ""
	return opts
}

func startOperator(ctx context.Context, env *testenv.Env) (<-chan struct{}, error) {
	log := funcr.New(func(prefix, args string) {
		operatorLogs.add(prefix + " " + args)
		if os.Getenv("TEST_OPERATOR_LOGS") != "" {
			fmt.Fprintln(os.Stderr, prefix, args)
		}
	}, funcr.Options{Verbosity: 1, LogTimestamp: true})
	ctrl.SetLogger(log)
	metricsRegistry = prometheus.NewRegistry()
	op, err := setup.New(ctx, env.Config, testOptions(), config.Defaults(), metricsRegistry, log)
	if err != nil {
		return nil, err
	}
	operatorClient = op.Manager.GetClient()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := op.Manager.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "operator stopped:", err)
		}
	}()
	return done, nil
}

// newKyma creates an access Secret and a Kyma whose runtime side lives in
// its own namespace of the shared runtime API server.
func newKyma(t *testing.T, name string, mutate ...func(*v1beta2.Kyma)) {
	t.Helper()
	newKymaWithKubeconfig(t, name, runtimeConfig, mutate...)
}

func newKymaWithKubeconfig(t *testing.T, name string, kubeconfig []byte, mutate ...func(*v1beta2.Kyma)) {
	t.Helper()
	putKubeconfig(t, name, kubeconfig)
	kyma := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: kcpNamespace,
			Annotations: map[string]string{shared.SyncNamespaceAnnotation: name},
			Labels:      map[string]string{shared.RuntimeIDLabel: "runtime-" + name},
		},
		Spec: v1beta2.KymaSpec{Channel: "regular"},
	}
	for _, m := range mutate {
		m(kyma)
	}
	require.NoError(t, kcp.Client.Create(t.Context(), kyma))
}

// putKubeconfig creates or replaces the access Secret of a Kyma.
func putKubeconfig(t *testing.T, kyma string, kubeconfig []byte) {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "kubeconfig-" + kyma, Namespace: kcpNamespace,
		Labels: map[string]string{shared.KymaNameLabel: kyma},
	}}
	_, err := ctrl.CreateOrUpdate(t.Context(), kcp.Client, secret, func() error {
		secret.Data = map[string][]byte{shared.KubeconfigSecretKey: kubeconfig}
		return nil
	})
	require.NoError(t, err)
}

func releaseMeta(t *testing.T, module string, channels map[string]string, mutate ...func(*v1beta2.ModuleReleaseMeta)) {
	t.Helper()
	mrm := &v1beta2.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Name: module, Namespace: kcpNamespace},
		Spec:       v1beta2.ModuleReleaseMetaSpec{ModuleName: module, OcmComponentName: "kyma-project.io/module/" + module},
	}
	for c, v := range channels {
		mrm.Spec.Channels = append(mrm.Spec.Channels, v1beta2.ChannelVersionAssignment{Channel: c, Version: v})
	}
	for _, m := range mutate {
		m(mrm)
	}
	require.NoError(t, kcp.Client.Create(t.Context(), mrm))
}

func getKyma(t *testing.T, name string) *v1beta2.Kyma {
	t.Helper()
	k := &v1beta2.Kyma{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, k))
	return k
}

func runtimeKyma(t *testing.T, name string) (*v1beta2.Kyma, error) {
	t.Helper()
	k := &v1beta2.Kyma{}
	err := runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: name, Name: shared.DefaultRuntimeKymaName}, k)
	return k, err
}

// eventuallyKyma waits until check passes on the KCP Kyma, and shows the
// last status when it does not.
func eventuallyKyma(t *testing.T, name string, what string, check func(*v1beta2.Kyma) bool) *v1beta2.Kyma {
	t.Helper()
	var last *v1beta2.Kyma
	ok := waitFor(timeout, func() bool {
		k := &v1beta2.Kyma{}
		if err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, k); err != nil {
			return false
		}
		last = k
		return check(k)
	})
	if !ok {
		status, _ := json.MarshalIndent(last, "", "  ")
		logOperatorAbout(t, name)
		require.FailNow(t, "Kyma "+name+" never reached: "+what, string(status))
	}
	return last
}

func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
}

func moduleStatus(k *v1beta2.Kyma, name string) *v1beta2.ModuleStatus {
	for i := range k.Status.Modules {
		if k.Status.Modules[i].Name == name {
			return &k.Status.Modules[i]
		}
	}
	return nil
}

// nudge enqueues a Kyma the way the push path does when its runtime
// changes: the agent and the listener (a later part) are not running in
// this suite, and the resync is an hour away.
func nudge(t *testing.T, name string) {
	t.Helper()
	updateKyma(t, name, func(k *v1beta2.Kyma) { k.Labels["test.lifecycle-manager/nudge"] = fmt.Sprint(time.Now().UnixNano()) })
}

// istioCRDs reads the Gateway and VirtualService CRDs from the istio.io/api
// module, which ships Istio's CRD YAML.
func istioCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := exec.CommandContext(context.Background(), "go", "list", "-m", "-f", "{{.Dir}}", "istio.io/api").Output()
	if err != nil {
		return nil, fmt.Errorf("locating the istio.io/api module: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "kubernetes", "customresourcedefinitions.gen.yaml"))
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, doc := range strings.Split(string(raw), "\n---") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(doc), crd); err != nil {
			return nil, fmt.Errorf("decoding Istio CRDs: %w", err)
		}
		if crd.Spec.Group == "networking.istio.io" && (crd.Spec.Names.Kind == "Gateway" || crd.Spec.Names.Kind == "VirtualService") {
			crds = append(crds, crd)
		}
	}
	if len(crds) != 2 {
		return nil, fmt.Errorf("found %d of the 2 Istio CRDs", len(crds))
	}
	return crds, nil
}

// updateKyma changes a KCP Kyma, retrying on conflicts with the operator's writes.
func updateKyma(t *testing.T, name string, mutate func(*v1beta2.Kyma)) {
	t.Helper()
	require.Eventually(t, func() bool {
		k := &v1beta2.Kyma{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, k) != nil {
			return false
		}
		mutate(k)
		return kcp.Client.Update(t.Context(), k) == nil
	}, timeout, tick, "updating Kyma %s", name)
}

// updateManifest changes a Manifest, retrying on conflicts with the operator's writes.
func updateManifest(t *testing.T, name string, mutate func(*v1beta2.Manifest)) {
	t.Helper()
	require.Eventually(t, func() bool {
		mf := &v1beta2.Manifest{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, mf) != nil {
			return false
		}
		mutate(mf)
		return kcp.Client.Update(t.Context(), mf) == nil
	}, timeout, tick, "updating Manifest %s", name)
}

// updateRuntimeKyma changes a runtime Kyma, retrying on conflicts.
func updateRuntimeKyma(t *testing.T, name string, mutate func(*v1beta2.Kyma)) {
	t.Helper()
	require.Eventually(t, func() bool {
		k, err := runtimeKyma(t, name)
		if err != nil {
			return false
		}
		mutate(k)
		return runtimeEnv.Client.Update(t.Context(), k) == nil
	}, timeout, tick, "updating the runtime Kyma of %s", name)
}
