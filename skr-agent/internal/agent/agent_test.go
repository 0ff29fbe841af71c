package agent_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/skr-agent/internal/agent"
	"github.com/lifecycle-manager/skr-agent/internal/config"
	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/kcptest"
)

// env is the runtime's API server, shared by the tests of this package.
var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

const (
	runtimeID = "runtime-4f3a9c"
	manager   = "lifecycle-manager"
)

// runtime is a running agent with its certificates, its KCP stand-in and
// the webhook configuration that sends it the Kymas of one namespace.
type runtime struct {
	ca        *pkitest.CA
	files     pkitest.Files
	receiver  *kcptest.Receiver
	agent     *agent.Agent
	reg       *prometheus.Registry
	namespace string
}

var namespaces atomic.Int32

func startRuntime(t *testing.T) *runtime {
	t.Helper()
	rt := newRuntime(t)
	rt.runAgent(t)
	rt.namespace = fmt.Sprintf("skr-%d", namespaces.Add(1))
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rt.namespace}}))
	rt.registerWebhook(t)
	return rt
}

// newRuntime makes the certificates and starts the KCP stand-in.
func newRuntime(t *testing.T) *runtime {
	t.Helper()
	ca := pkitest.NewCA(t, "kcp-ca")
	srvCert, srvKey := ca.Issue("skr-events.kcp", pki.UsageServer)
	rt := &runtime{ca: ca, receiver: kcptest.Start(t, srvCert, srvKey, ca.PEM()), reg: prometheus.NewRegistry()}
	// One certificate, CN = runtime ID: serving certificate for the API server and client certificate for the KCP.
	cert, key := ca.Issue(runtimeID, pki.UsageClient|pki.UsageServer)
	rt.files = pkitest.WriteFiles(t, t.TempDir(), cert, key, ca.PEM())
	return rt
}

// runAgent starts the agent; it is stopped when the test ends.
func (rt *runtime) runAgent(t *testing.T) {
	t.Helper()
	cfg := config.Config{
		KCPAddr: rt.receiver.Addr, KCPContract: "v2", KCPServerName: "127.0.0.1",
		CACertFile: rt.files.CA, TLSCertFile: rt.files.Cert, TLSKeyFile: rt.files.Key,
		BindAddress: "127.0.0.1", WebhookPort: 0, MetricsPort: 0,
		QueueSize: 1000, Workers: 2, RequestTimeout: 5 * time.Second,
		BackoffInitial: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		DrainTimeout: time.Second, MaxReviewBytes: 1 << 20, ReloadInterval: 50 * time.Millisecond,
		ResyncManager: manager, LogLevel: "info",
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := agent.New(ctx, cfg, rt.reg, rt.reg, logr.Discard())
	require.NoError(t, err)
	rt.agent = a
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// registerWebhook points the API server at the agent for the Kymas of the
// runtime's namespace, as the chart does in URL mode.
func (rt *runtime) registerWebhook(t *testing.T) {
	t.Helper()
	url := fmt.Sprintf("https://%s/validate/%s", rt.agent.WebhookAddr(), manager)
	ignore, none, timeout := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone, int32(3)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "skr-agent-" + rt.namespace},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "kyma.skr-agent.operator.kyma-project.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: rt.ca.PEM()},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			TimeoutSeconds:          &timeout,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				"kubernetes.io/metadata.name": rt.namespace,
			}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{
					admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete,
				},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{v1beta2.GroupVersion.Group}, APIVersions: []string{"v1beta2"}, Resources: []string{"kymas"},
				},
			}},
		}},
	}
	require.NoError(t, env.Client.Create(t.Context(), cfg))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cfg) })
	// The API server picks the configuration up asynchronously: write a probe
	// Kyma until its event arrives.
	probe := rt.kyma("probe")
	require.NoError(t, env.Client.Create(t.Context(), probe))
	channels := []string{"regular", "fast"}
	i := 0
	require.Eventually(t, func() bool {
		if len(rt.eventsFor("probe")) > 0 {
			return true
		}
		i++
		probe.Spec.Channel = channels[i%2]
		_ = env.Client.Update(t.Context(), probe)
		return false
	}, 30*time.Second, 100*time.Millisecond, "the API server never called the agent")
}

func (rt *runtime) kyma(name string) *v1beta2.Kyma {
	return &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rt.namespace},
		Spec:       v1beta2.KymaSpec{Channel: "regular", Modules: []v1beta2.Module{{Name: "keda"}}},
	}
}

// eventsFor returns the events of the runtime namespace's Kyma name.
func (rt *runtime) eventsFor(name string) []kcptest.Received {
	var out []kcptest.Received
	for _, e := range rt.receiver.Events() {
		if e.Body.Watched.Namespace == rt.namespace && e.Body.Watched.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func (rt *runtime) metric(t *testing.T, name, labels string) float64 {
	t.Helper()
	families, err := rt.reg.Gather()
	require.NoError(t, err)
	return sumOf(families, name, labels)
}

// sumOf adds up the counters name of families whose labels contain labels.
func sumOf(families []*dto.MetricFamily, name, labels string) float64 {
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				pairs = append(pairs, l.GetName()+"="+l.GetValue())
			}
			if labels == "" || strings.Contains(strings.Join(pairs, ","), labels) {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

func TestKymaUpdateProducesExactlyOneEvent(t *testing.T) {
	rt := startRuntime(t)
	k := rt.kyma("default")
	require.NoError(t, env.Client.Create(t.Context(), k))
	require.Eventually(t, func() bool { return len(rt.eventsFor("default")) == 1 }, 10*time.Second, 10*time.Millisecond, "CREATE")

	// Writes the KCP does not care about: labels and status.
	k.Labels = map[string]string{"team": "a"}
	require.NoError(t, env.Client.Update(t.Context(), k))
	k.Status.State = "Ready"
	require.NoError(t, env.Client.Status().Update(t.Context(), k))
	assert.InDelta(t, 1, rt.metric(t, "skr_agent_admission_requests_total", "decision=unchanged,operation=UPDATE"), 0,
		"the label change was seen and judged unchanged")

	k.Spec.Channel = "fast"
	require.NoError(t, env.Client.Update(t.Context(), k))
	require.Eventually(t, func() bool { return len(rt.eventsFor("default")) == 2 }, 10*time.Second, 10*time.Millisecond, "UPDATE")
	// Fence: a later event for another Kyma arrives after anything queued before it would have.
	fence := rt.kyma("fence")
	require.NoError(t, env.Client.Create(t.Context(), fence))
	require.Eventually(t, func() bool { return len(rt.eventsFor("fence")) == 1 }, 10*time.Second, 10*time.Millisecond)

	events := rt.eventsFor("default")
	require.Len(t, events, 2, "one event for the CREATE and exactly one for the spec UPDATE")
	got := events[1]
	assert.Equal(t, runtimeID, got.CN)
	assert.Equal(t, "/v2/"+manager+"/event", got.Path)
	want := event.NewKey(manager, event.KymaGVK, rt.namespace, "default").Body()
	assert.Equal(t, want, got.Body)

	require.NoError(t, env.Client.Delete(t.Context(), k))
	require.Eventually(t, func() bool { return len(rt.eventsFor("default")) == 3 }, 10*time.Second, 10*time.Millisecond, "DELETE")
}

func TestEventArrivesWhenTheKCPIsBack(t *testing.T) {
	rt := startRuntime(t)
	rt.receiver.Stop()
	k := rt.kyma("default")
	require.NoError(t, env.Client.Create(t.Context(), k), "writes are not held up by the KCP being down")
	require.Eventually(t, func() bool { return rt.metric(t, "skr_agent_events_failed_total", "reason=transport") >= 3 },
		10*time.Second, 10*time.Millisecond, "the agent retries")
	assert.Empty(t, rt.eventsFor("default"))

	rt.receiver.Restart()
	require.Eventually(t, func() bool { return len(rt.eventsFor("default")) == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, runtimeID, rt.eventsFor("default")[0].CN)

	// Under the public agent's names every failed attempt is a failed
	// request to the KCP, and every attempt a request. Read once the agent
	// is idle: the resync at start may still be on its way.
	require.Eventually(t, func() bool {
		families, err := rt.reg.Gather()
		require.NoError(t, err)
		failed := sumOf(families, "skr_agent_events_failed_total", "reason=transport")
		return failed >= 3 && failed == sumOf(families, "watcher_failed_kcp_total", "error_reason=failed-request") &&
			failed+sumOf(families, "skr_agent_events_forwarded_total", "") == sumOf(families, "watcher_kcp_requests_total", "") &&
			sumOf(families, "watcher_admission_request_total", "") > 0 &&
			sumOf(families, "skr_agent_admission_requests_total", "") == sumOf(families, "watcher_admission_request_total", "")
	}, 10*time.Second, 10*time.Millisecond, "the public agent's counters add up from ours")
}

// TestAStartedAgentResyncsTheRuntimesKyma: an agent that starts holds no
// queue, whatever changed while no agent ran or sat in the queue of a
// killed one. Its first event, once the KCP takes events, is the resync
// of the runtime's Kyma, which makes the KCP reconcile the whole runtime.
func TestAStartedAgentResyncsTheRuntimesKyma(t *testing.T) {
	rt := newRuntime(t)
	rt.receiver.Stop()
	rt.runAgent(t)
	require.Eventually(t, func() bool { return rt.ready(t) }, 10*time.Second, 10*time.Millisecond, "the agent serves")
	assert.Empty(t, rt.receiver.Events())

	rt.receiver.Restart()
	require.Eventually(t, func() bool { return len(rt.receiver.Events()) > 0 }, 10*time.Second, 10*time.Millisecond,
		"the resync reaches the KCP once it is back, without any change in the runtime")
	got := rt.receiver.Events()[0]
	assert.Equal(t, runtimeID, got.CN)
	assert.Equal(t, "/v2/"+manager+"/event", got.Path)
	assert.Equal(t, event.NewKey(manager, event.KymaGVK, "kyma-system", "default").Body(), got.Body)
	assert.Len(t, rt.receiver.Events(), 1, "one resync, not one per failed attempt")
}

// ready reports whether the agent's /readyz answers 200.
func (rt *runtime) ready(t *testing.T) bool {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+rt.agent.MetricsAddr().String()+"/readyz", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func TestCertificateRotationWithoutRestart(t *testing.T) {
	rt := startRuntime(t)
	before := servingSerial(t, rt)
	k := rt.kyma("default")
	require.NoError(t, env.Client.Create(t.Context(), k))
	require.Eventually(t, func() bool { return len(rt.eventsFor("default")) == 1 }, 10*time.Second, 10*time.Millisecond)
	clientBefore := rt.eventsFor("default")[0].Serial
	assert.Equal(t, before, clientBefore, "one certificate serves both ends")

	cert, key := rt.ca.Issue(runtimeID, pki.UsageClient|pki.UsageServer)
	rt.files.Write(t, cert, key, nil)
	require.Eventually(t, func() bool { return servingSerial(t, rt) != before }, 10*time.Second, 20*time.Millisecond,
		"the webhook serves the new certificate")
	after := servingSerial(t, rt)

	// The API server still reaches the webhook, and the KCP sees the new client certificate.
	channels := []string{"fast", "regular"}
	i := 0
	require.Eventually(t, func() bool {
		events := rt.eventsFor("default")
		if events[len(events)-1].Serial == after {
			return true
		}
		i++
		k.Spec.Channel = channels[i%2]
		require.NoError(t, env.Client.Update(t.Context(), k))
		return false
	}, 20*time.Second, 100*time.Millisecond, "an event with the new client certificate")
	assert.GreaterOrEqual(t, rt.metric(t, "skr_agent_certificate_reloads_total", "result=success,what=keypair"), 1.0)
}

func servingSerial(t *testing.T, rt *runtime) string {
	t.Helper()
	d := tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}} //nolint:gosec // reads the certificate only
	conn, err := d.DialContext(t.Context(), "tcp", rt.agent.WebhookAddr().String())
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	tc, ok := conn.(*tls.Conn)
	require.True(t, ok)
	return tc.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func TestOpsPort(t *testing.T) {
	rt := startRuntime(t)
	base := "http://" + rt.agent.MetricsAddr().String()
	for path, want := range map[string]int{
		"/healthz": http.StatusOK, "/readyz": http.StatusOK, "/metrics": http.StatusOK,
		"/validate/" + manager: http.StatusNotFound, // the webhook is on the TLS port only
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
	n, err := testutil.GatherAndCount(rt.reg, "skr_agent_queue_depth", "skr_agent_events_forwarded_total")
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	// The webhook port speaks TLS only.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+rt.agent.WebhookAddr().String()+"/validate/"+manager, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP is refused")
	}
}
