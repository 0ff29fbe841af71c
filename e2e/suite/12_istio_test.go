package suite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// The Istio scenario's namespace, watched only by the gateway-mode
// operator, and the event endpoint's host (the Gateway's and the
// endpoint certificate's).
const (
	istioNS   = "kcp-istio"
	eventHost = "events.kcp.example"
	// gatewayPort is the event Gateway's HTTPS port.
	gatewayPort = 443
)

// ingressLabels are the pod labels of Istio's default ingress gateway,
// which the operator's Gateway selects.
var ingressLabels = map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"}

func TestIstioRoutesEveryWatcherToItsListener(t *testing.T) {
	if !h.Local {
		t.Skip("clusters mode runs a real Istio (e2e/kind-up.sh); this scenario starts istiod against the local KCP")
	}
	ctx := t.Context()
	step(t, "Given istiod watching the KCP, its validation webhook registered for %s, and a second operator in gateway mode keeping the Watchers' routes there", istioNS)
	istiod, err := h.StartIstiod(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = istiod.Stop() })
	require.NoError(t, createNamespace(t, istioNS))
	unregister, err := istiod.RegisterValidation(ctx, h.KCP.Client, istioNS)
	require.NoError(t, err)
	t.Cleanup(unregister)
	op, err := h.StartGatewayOperator(ctx, istioNS, eventHost)
	require.NoError(t, err)
	t.Cleanup(func() { _ = op.Stop() })

	step(t, "When two Watchers name their listener Services (which exist, as the chart's listener Service does)")
	klm := istioWatcher("klm-watcher", "lifecycle-manager", "lifecycle-manager-events", 8082)
	sample := istioWatcher("sample-watcher", "sample-manager", "sample-events", 9090)
	for _, w := range []*v1beta2.Watcher{klm, sample} {
		createListenerService(t, w.Spec.ServiceInfo)
		require.NoError(t, h.KCP.Client.Create(ctx, w))
	}

	step(t, "Then istiod's webhook let the operator's Gateway and VirtualServices in: both Watchers report their VirtualService configured")
	for _, w := range []*v1beta2.Watcher{klm, sample} {
		eventuallyWatcherRouted(t, w)
	}

	step(t, "And it refuses a broken VirtualService and a Gateway without its credential")
	refusesBroken(t)

	step(t, "Then the ingress gateway that istiod configures routes both Watchers' event paths to their listener, over mutual TLS, with the operator's retries")
	node := harness.IngressGatewayNode(ingressLabels)
	cfg := eventuallyRouted(t, istiod, node, klm, sample)

	step(t, "And the checks see a wrong port or host as wrong, and another proxy gets no event listener")
	wrongPort := sample.DeepCopy()
	wrongPort.Spec.ServiceInfo.Port = 9999
	routeName, err := eventChain(cfg, eventHost)
	require.NoError(t, err)
	require.Error(t, watcherRoutes(cfg, routeName, eventHost, wrongPort), "a route to another port")
	require.Error(t, watcherRoutes(cfg, routeName, "other.example", klm), "a route for another host")
	_, err = eventChain(cfg, "other.example")
	require.Error(t, err, "TLS for another host")
	egress, err := istiod.ProxyConfig(ctx, harness.IngressGatewayNode(map[string]string{"istio": "egressgateway"}))
	require.NoError(t, err)
	_, err = eventChain(egress, eventHost)
	require.Error(t, err, "a proxy the Gateway does not select")

	step(t, "When the sample Watcher's listener moves to port 9091")
	createListenerService(t, v1beta2.Service{Name: "sample-events-next", Namespace: istioNS, Port: 9091})
	updateWatcher(t, sample, func(w *v1beta2.Watcher) {
		w.Spec.ServiceInfo = v1beta2.Service{Name: "sample-events-next", Namespace: istioNS, Port: 9091}
	})

	step(t, "Then istiod routes its events there, and no longer to the old port")
	old := sample.DeepCopy()
	sample.Spec.ServiceInfo = v1beta2.Service{Name: "sample-events-next", Namespace: istioNS, Port: 9091}
	cfg = eventuallyRouted(t, istiod, node, klm, sample)
	require.Error(t, watcherRoutes(cfg, routeName, eventHost, old))

	step(t, "When the sample Watcher is deleted, its event paths are no longer routed")
	require.NoError(t, h.KCP.Client.Delete(ctx, sample))
	require.Eventually(t, func() bool {
		cfg, err := istiod.ProxyConfig(ctx, node)
		return err == nil && watcherRoutes(cfg, routeName, eventHost, klm) == nil &&
			routeOf(cfg.Routes[routeName], eventHost, "/v1/sample-manager/event") == nil
	}, timeout, tick)
}

func istioWatcher(name, manager, service string, port int64) *v1beta2.Watcher {
	return &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: istioNS},
		Spec: v1beta2.WatcherSpec{
			Manager:         manager,
			ServiceInfo:     v1beta2.Service{Name: service, Namespace: istioNS, Port: port},
			ResourceToWatch: v1beta2.WatchableGVR{Group: "operator.kyma-project.io", Version: "v1beta2", Resource: "kymas"},
			Field:           v1beta2.FieldSpec,
			Gateway: v1beta2.GatewayConfig{LabelSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{shared.WatcherGatewayLabel: shared.WatcherGatewayDefault}}},
		},
	}
}

func createNamespace(t *testing.T, name string) error {
	t.Helper()
	return client.IgnoreAlreadyExists(h.KCP.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}

// createListenerService creates a Service as the chart's listener
// Service: no selector (the leader keeps its endpoints), one TCP port.
func createListenerService(t *testing.T, s v1beta2.Service) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "http-events", Port: int32(s.Port), TargetPort: intstr.FromInt32(int32(s.Port)), Protocol: corev1.ProtocolTCP,
		}}},
	}
	require.NoError(t, h.KCP.Client.Create(t.Context(), svc))
}

func eventuallyWatcherRouted(t *testing.T, w *v1beta2.Watcher) {
	t.Helper()
	got := &v1beta2.Watcher{}
	if !poll(func() bool {
		return h.KCP.Client.Get(t.Context(), client.ObjectKeyFromObject(w), got) == nil &&
			meta.IsStatusConditionTrue(got.Status.Conditions, v1beta2.ConditionVirtualService)
	}) {
		require.FailNowf(t, "Watcher not routed", "Watcher %s: its VirtualService condition never became True; status %+v", w.Name, got.Status)
	}
}

// eventuallyRouted waits until istiod's configuration for node passes
// every check for the Watchers, and returns it; on timeout it fails with
// the last check's error.
func eventuallyRouted(t *testing.T, istiod *harness.Istiod, node harness.ProxyNode, ws ...*v1beta2.Watcher) *harness.ProxyConfig {
	t.Helper()
	var cfg *harness.ProxyConfig
	var last error
	check := func() error {
		c, err := istiod.ProxyConfig(t.Context(), node)
		if err != nil {
			return err
		}
		name, err := eventChain(c, eventHost)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if err := watcherRoutes(c, name, eventHost, w); err != nil {
				return err
			}
		}
		cfg = c
		for _, w := range ws {
			s := w.Spec.ServiceInfo
			t.Logf("istiod: %s/v1|v2/%s/event on route %s goes to outbound|%d||%s.%s.svc.cluster.local", eventHost, w.ManagerName(), name, s.Port, s.Name, s.Namespace)
		}
		return nil
	}
	if !poll(func() bool { last = check(); return last == nil }) {
		require.FailNowf(t, "istiod's gateway configuration", "never routed the Watchers: %v\nistiod log:\n%s", last, istiod.Process.Tail(4000))
	}
	return cfg
}

// poll checks cond every tick until it holds or timeout passes.
func poll(cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(tick) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// refusesBroken writes two objects that Istio's CRD schemas accept but
// istiod's validation does not; the API server must refuse both.
func refusesBroken(t *testing.T) {
	t.Helper()
	vs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": "broken-retries", "namespace": istioNS},
		"spec": map[string]any{
			"hosts": []any{eventHost}, "gateways": []any{istioNS + "/lifecycle-manager-events"},
			"http": []any{map[string]any{
				"route":   []any{map[string]any{"destination": map[string]any{"host": "lifecycle-manager-events." + istioNS + ".svc.cluster.local"}}},
				"retries": map[string]any{"attempts": 3, "retryOn": "connect-failure,on-every-friday"},
			}},
		},
	}}
	err := h.KCP.Client.Create(t.Context(), vs)
	require.ErrorContains(t, err, `"on-every-friday" is not a valid retryOn policy`)
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "broken-tls", "namespace": istioNS},
		"spec": map[string]any{
			"selector": map[string]any{"istio": "ingressgateway"},
			"servers": []any{map[string]any{
				"port":  map[string]any{"number": 443, "name": "https-events", "protocol": "HTTPS"},
				"tls":   map[string]any{"mode": "MUTUAL"},
				"hosts": []any{eventHost},
			}},
		},
	}}
	err = h.KCP.Client.Create(t.Context(), gw)
	require.ErrorContains(t, err, "MUTUAL TLS requires a client CA bundle")
}

// updateWatcher edits a Watcher, retrying on conflicts with status writes.
func updateWatcher(t *testing.T, w *v1beta2.Watcher, mutate func(*v1beta2.Watcher)) {
	t.Helper()
	require.Eventually(t, func() bool {
		got := &v1beta2.Watcher{}
		if h.KCP.Client.Get(t.Context(), client.ObjectKeyFromObject(w), got) != nil {
			return false
		}
		mutate(got)
		return h.KCP.Client.Update(t.Context(), got) == nil
	}, timeout, tick)
}
