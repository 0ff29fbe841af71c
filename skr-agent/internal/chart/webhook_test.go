package chart_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/skr-agent/internal/agent"
	"github.com/lifecycle-manager/skr-agent/internal/config"
	"github.com/lifecycle-manager/skr-agent/internal/kcptest"
)

// TestAPIServerCallsTheAgentThroughTheRenderedWebhook installs the chart's
// webhook configuration in URL mode for real, with a spec watcher that
// selects by label and a status watcher, and checks which writes reach the
// KCP stand-in under which manager.
func TestAPIServerCallsTheAgentThroughTheRenderedWebhook(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca")
	srvCert, srvKey := ca.Issue("skr-events.kcp", pki.UsageServer)
	receiver := kcptest.Start(t, srvCert, srvKey, ca.PEM())
	cert, key := ca.Issue("runtime-1", pki.UsageClient|pki.UsageServer)
	files := pkitest.WriteFiles(t, t.TempDir(), cert, key, ca.PEM())
	a := runAgent(t, config.Config{
		KCPAddr: receiver.Addr, KCPContract: "v2", KCPServerName: "127.0.0.1",
		CACertFile: files.CA, TLSCertFile: files.Cert, TLSKeyFile: files.Key, BindAddress: "127.0.0.1",
		QueueSize: 100, Workers: 2, RequestTimeout: 5 * time.Second, BackoffInitial: 20 * time.Millisecond,
		BackoffMax: time.Second, DrainTimeout: time.Second, MaxReviewBytes: 1 << 20, ReloadInterval: time.Second,
		ResyncManager: "lifecycle-manager", LogLevel: "info",
	})

	statusOfKymas := map[string]any{
		"name": "kyma-status", "manager": "status-manager", "field": "status",
		"resourceToWatch": map[string]any{"group": "operator.kyma-project.io", "version": "v1beta2", "resource": "kymas"},
	}
	v := set(values(ca.PEM(), kymaWatcher(), statusOfKymas), "webhook.url", "https://"+a.WebhookAddr().String())
	objs := mustRender(t, v)
	vwc := objs["ValidatingWebhookConfiguration"]
	require.NoError(t, env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(vwc),
		client.ForceOwnership, client.FieldOwner("skr-agent-chart-test")))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), vwc) })

	const ns = "webhook-e2e"
	require.NoError(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	watchedBy := map[string]string{"operator.kyma-project.io/watched-by": "lifecycle-manager"}
	newKyma := func(name string, labels map[string]string) *v1beta2.Kyma {
		return &v1beta2.Kyma{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec:       v1beta2.KymaSpec{Channel: "regular"},
		}
	}
	count := func(name, path string) int {
		n := 0
		for _, e := range receiver.Events() {
			if e.Body.Watched.Name == name && e.Path == path {
				n++
			}
		}
		return n
	}
	const specPath, statusPath = "/v2/lifecycle-manager/event", "/v2/status-manager/event"

	// The API server loads webhook configurations asynchronously.
	probe := newKyma("probe", watchedBy)
	require.NoError(t, env.Client.Create(t.Context(), probe))
	require.Eventually(t, func() bool {
		if count("probe", specPath) > 0 {
			return true
		}
		probe.Spec.Channel = map[string]string{"regular": "fast", "fast": "regular"}[probe.Spec.Channel]
		_ = env.Client.Update(t.Context(), probe)
		return false
	}, 30*time.Second, 100*time.Millisecond)

	watched, unwatched := newKyma("watched", watchedBy), newKyma("unwatched", nil)
	require.NoError(t, env.Client.Create(t.Context(), watched))
	require.NoError(t, env.Client.Create(t.Context(), unwatched))
	unwatched.Spec.Channel = "fast"
	require.NoError(t, env.Client.Update(t.Context(), unwatched))
	watched.Status.State = "Ready"
	require.NoError(t, env.Client.Status().Update(t.Context(), watched))
	require.Eventually(t, func() bool { return count("watched", statusPath) == 1 }, 10*time.Second, 10*time.Millisecond,
		"a status change goes to the status watcher's manager")

	fence := newKyma("fence", watchedBy)
	require.NoError(t, env.Client.Create(t.Context(), fence))
	require.Eventually(t, func() bool { return count("fence", specPath) == 1 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, count("watched", specPath), "the CREATE of the labelled Kyma")
	assert.Zero(t, count("unwatched", specPath), "the objectSelector keeps unlabelled Kymas out")
	assert.Zero(t, count("watched", statusPath)-1, "one status event only")
}

func runAgent(t *testing.T, cfg config.Config) *agent.Agent {
	t.Helper()
	reg := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := agent.New(ctx, cfg, reg, reg, logr.Discard())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return a
}
