package setup_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
	"github.com/lifecycle-manager/listener/event"
)

func getKyma(t *testing.T) *v1beta2.Kyma {
	t.Helper()
	k := &v1beta2.Kyma{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kymaName}, k))
	return k
}

// waitForAgent waits until the operator reports the agent ready.
func waitForAgent(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		return meta.IsStatusConditionTrue(getKyma(t).Status.Conditions, v1beta2.ConditionSKRWebhook)
	}, timeout, tick, "the agent is installed and ready")
}

func TestAgentIsInstalledWithItsWebhooks(t *testing.T) {
	waitForAgent(t)
	require.Eventually(t, func() bool { return getKyma(t).Status.State == shared.StateReady }, timeout, tick)

	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Name: agent.Fullname(shared.DefaultRuntimeNamespace)}, vwc))
	names := map[string]admissionregistrationv1.ValidatingWebhook{}
	for _, w := range vwc.Webhooks {
		names[w.Name] = w
	}
	require.Contains(t, names, "klm-watcher.operator.kyma-project.io")
	require.Contains(t, names, agent.DriftManager+".operator.kyma-project.io")
	drift := names[agent.DriftManager+".operator.kyma-project.io"]
	assert.Equal(t, map[string]string{shared.ManagedByLabel: shared.OperatorName}, drift.ObjectSelector.MatchLabels)
	assert.ElementsMatch(t, []admissionregistrationv1.OperationType{"UPDATE", "DELETE"}, drift.Rules[0].Operations)
	assert.Equal(t, "https://127.0.0.1:"+strconv.Itoa(kubelet.webhookPort)+"/validate/lifecycle-manager",
		*names["klm-watcher.operator.kyma-project.io"].ClientConfig.URL)

	secret := &corev1.Secret{}
	require.NoError(t, runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "skr-agent-tls"}, secret))
	certs, err := pki.ParseCerts(secret.Data["tls.crt"])
	require.NoError(t, err)
	assert.Equal(t, runtimeID, certs[0].Subject.CommonName, "the agent's identity is the runtime ID")
}

// TestRuntimeEditIsPushed is the push path end to end: an admin edits the
// runtime Kyma, the API server calls the agent, the agent posts the event
// over mTLS, the listener enqueues the Kyma, and the module gets its
// Manifest — with every resync hours away.
func TestRuntimeEditIsPushed(t *testing.T) {
	require.NoError(t, testmodule.Module{Name: "sierra", Version: "1.0.0"}.Publish(t.Context(), kcp.Client, reg.Host, ns))
	releaseMeta(t, "sierra")
	waitForAgent(t)

	var written time.Time
	require.Eventually(t, func() bool {
		rk := &v1beta2.Kyma{}
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "default"}, rk) != nil {
			return false
		}
		rk.Spec.Modules = append(rk.Spec.Modules, v1beta2.Module{Name: "sierra"})
		written = time.Now()
		return runtimeEnv.Client.Update(t.Context(), rk) == nil
	}, timeout, tick, "the admin's edit is written")

	var manifestSeen time.Time
	require.Eventually(t, func() bool {
		mf := &v1beta2.Manifest{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kymaName + "-sierra"}, mf) != nil {
			return false
		}
		manifestSeen = time.Now()
		return true
	}, timeout, 20*time.Millisecond, "the runtime's edit reaches the KCP by push")
	// The edit's own event: a reconcile for the new release meta may have
	// read the edit first on a slow machine, so the event can come after
	// the Manifest; it must come.
	var hop push.Hop
	require.Eventually(t, func() bool {
		var ok bool
		hop, ok = op.Pushed.Last(types.NamespacedName{Namespace: ns, Name: kymaName})
		return ok && hop.Latest.After(written)
	}, timeout, 20*time.Millisecond, "the edit is pushed and starts a reconcile")
	t.Logf("push timeline: runtime write → listener received %v → reconcile start %v → Manifest seen %v",
		hop.Latest.Sub(written).Round(time.Microsecond), hop.Reconciled.Sub(written).Round(time.Microsecond),
		manifestSeen.Sub(written).Round(time.Millisecond))
}

// TestDriftIsRepairedByPush deletes a module's Deployment in the runtime:
// the drift watch reports it and the Manifest controller puts it back.
func TestDriftIsRepairedByPush(t *testing.T) {
	require.NoError(t, testmodule.Module{Name: "tango", Version: "1.0.0"}.Publish(t.Context(), kcp.Client, reg.Host, ns))
	releaseMeta(t, "tango")
	waitForAgent(t)
	updateKyma(t, func(k *v1beta2.Kyma) { k.Spec.Modules = append(k.Spec.Modules, v1beta2.Module{Name: "tango"}) })

	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: "kyma-system", Name: "tango-operator"}
	require.Eventually(t, func() bool { return runtimeEnv.Client.Get(t.Context(), key, dep) == nil }, timeout, tick, "installed")
	require.Eventually(t, func() bool {
		mf := &v1beta2.Manifest{}
		return kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: kymaName + "-tango"}, mf) == nil &&
			strings.Contains(mf.Status.Applied, "/")
	}, timeout, tick, "the install is recorded")
	oldUID := dep.UID
	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), dep))
	require.Eventually(t, func() bool {
		d := &appsv1.Deployment{}
		return runtimeEnv.Client.Get(t.Context(), key, d) == nil && d.UID != oldUID
	}, timeout, tick, "the deleted Deployment is back, by push")
}

// TestStatusWatcherAndRerender adds a Watcher for the status of labelled
// Deployments, for a manager that code embedded with the operator
// consumes: the agent is re-rendered with its webhook, and a status update
// arrives as an event.
func TestStatusWatcherAndRerender(t *testing.T) {
	waitForAgent(t)
	var (
		mu     sync.Mutex
		events []event.Event
	)
	go func() {
		_ = op.Listener.Consume(t.Context(), statusWatch, func(ev event.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
		})
	}()
	w := &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Name: statusWatch, Namespace: ns},
		Spec: v1beta2.WatcherSpec{
			Manager:         statusWatch,
			ServiceInfo:     v1beta2.Service{Name: "events", Namespace: ns, Port: 8082},
			ResourceToWatch: v1beta2.WatchableGVR{Group: "apps", Version: "v1", Resource: "deployments"},
			LabelsToWatch:   map[string]string{"push-test": "status"},
			Field:           v1beta2.FieldStatus,
			Gateway:         v1beta2.GatewayConfig{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
		},
	}
	require.NoError(t, kcp.Client.Create(t.Context(), w))
	require.Eventually(t, func() bool {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Name: agent.Fullname("kyma-system")}, vwc) != nil {
			return false
		}
		for _, wh := range vwc.Webhooks {
			if wh.Name == statusWatch+".operator.kyma-project.io" {
				return wh.Rules[0].Resources[0] == "deployments/status"
			}
		}
		return false
	}, timeout, tick, "the Watcher reaches the agent's webhook configuration")

	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "watched", Namespace: "kyma-system", Labels: map[string]string{"push-test": "status"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "watched"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "watched"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), dep))
	require.Eventually(t, func() bool {
		return testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, "kyma-system", "watched") == nil
	}, timeout, tick)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range events {
			if ev.Object.Name == "watched" && ev.GVK.Kind == "Deployment" && ev.RuntimeID == runtimeID {
				return true
			}
		}
		return false
	}, timeout, tick, "the status update arrives as an event of the runtime")
}

// TestUnknownRuntimeIsRejected posts the public runtime-watcher payload with
// a certificate of the KCP's CA whose runtime ID has no Kyma, and one of
// another CA.
func TestUnknownRuntimeIsRejected(t *testing.T) {
	waitForAgent(t)
	ca := kcpCA(t)
	resp, err := postAs(t, ca, "no-such-runtime")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Positive(t, counter(t, "listener_verification_failures_total", "reason", "unknown_runtime"))

	resp, err = postAs(t, ca, runtimeID)
	require.NoError(t, err, "the same payload with the runtime's identity is accepted")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	foreign, err := pki.NewCA("foreign", key, time.Now(), time.Hour)
	require.NoError(t, err)
	resp, err = postAs(t, foreign, runtimeID)
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err, "a certificate of another CA does not get through the handshake")
}

// kcpCA is the operator's current CA, which signs runtime certificates.
func kcpCA(t *testing.T) *pki.CA {
	t.Helper()
	caSecret := &corev1.Secret{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "lifecycle-manager-ca"}, caSecret))
	ca, err := pki.ParseCA(caSecret.Data["tls.crt"], caSecret.Data["tls.key"])
	require.NoError(t, err)
	return ca
}

// postAs posts the public runtime-watcher payload for the runtime Kyma to
// the listener with a client certificate for cn issued by issuer.
func postAs(t *testing.T, issuer *pki.CA, cn string) (*http.Response, error) {
	t.Helper()
	return listenerClient(t, issuer, cn).Do(publicEventRequest(t))
}

func counter(t *testing.T, name, label, value string) float64 {
	t.Helper()
	families, err := metrics.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

func releaseMeta(t *testing.T, module string) {
	t.Helper()
	require.NoError(t, kcp.Client.Create(t.Context(), &v1beta2.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Name: module, Namespace: ns},
		Spec: v1beta2.ModuleReleaseMetaSpec{ModuleName: module,
			Channels: []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "1.0.0"}}},
	}))
}

func updateKyma(t *testing.T, mutate func(*v1beta2.Kyma)) {
	t.Helper()
	require.Eventually(t, func() bool {
		k := getKyma(t)
		mutate(k)
		return kcp.Client.Update(t.Context(), k) == nil
	}, timeout, tick)
}
