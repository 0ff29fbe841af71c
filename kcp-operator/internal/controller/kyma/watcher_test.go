package kyma_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func newWatcher(t *testing.T, name, manager string, selector map[string]string) {
	t.Helper()
	w := &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kcpNamespace},
		Spec: v1beta2.WatcherSpec{
			Manager:         manager,
			ServiceInfo:     v1beta2.Service{Name: "klm-events", Namespace: kcpNamespace, Port: 8082},
			ResourceToWatch: v1beta2.WatchableGVR{Group: "operator.kyma-project.io", Version: "v1beta2", Resource: "kymas"},
			LabelsToWatch:   map[string]string{shared.WatchedByLabel: shared.WatchedByKymaValue},
			Field:           v1beta2.FieldSpec,
			Gateway:         v1beta2.GatewayConfig{LabelSelector: metav1.LabelSelector{MatchLabels: selector}},
		},
	}
	require.NoError(t, kcp.Client.Create(t.Context(), w))
}

func getWatcher(t *testing.T, name string) (*v1beta2.Watcher, error) {
	t.Helper()
	w := &v1beta2.Watcher{}
	return w, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, w)
}

func TestWatcherGetsAVirtualServiceOnTheEventGateway(t *testing.T) {
	gw := &networkingv1.Gateway{}
	require.Eventually(t, func() bool {
		return kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "events-gateway"}, gw) == nil
	}, timeout, tick, "the operator creates the event Gateway")
	require.Len(t, gw.Spec.Servers, 1)
	assert.Equal(t, "MUTUAL", gw.Spec.Servers[0].GetTls().GetMode().String())
	assert.Equal(t, "lifecycle-manager-endpoint-tls", gw.Spec.Servers[0].GetTls().GetCredentialName())
	assert.Equal(t, shared.WatcherGatewayDefault, gw.Labels[shared.WatcherGatewayLabel])

	newWatcher(t, "kyma-watcher", "lifecycle-manager", map[string]string{shared.WatcherGatewayLabel: shared.WatcherGatewayDefault})
	require.Eventually(t, func() bool {
		w, err := getWatcher(t, "kyma-watcher")
		return err == nil && w.Status.State == shared.StateReady
	}, timeout, tick)
	w, err := getWatcher(t, "kyma-watcher")
	require.NoError(t, err)
	assert.True(t, meta.IsStatusConditionTrue(w.Status.Conditions, v1beta2.ConditionVirtualService))
	assert.Equal(t, w.Generation, w.Status.ObservedGeneration)

	vs := &networkingv1.VirtualService{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "kyma-watcher"}, vs))
	assert.Equal(t, []string{kcpNamespace + "/events-gateway"}, vs.Spec.Gateways)
	assert.Equal(t, []string{"*"}, vs.Spec.Hosts)
	require.Len(t, vs.Spec.Http, 1)
	var paths []string
	for _, m := range vs.Spec.Http[0].Match {
		paths = append(paths, m.GetUri().GetExact())
	}
	assert.Equal(t, []string{"/v1/lifecycle-manager/event", "/v2/lifecycle-manager/event"}, paths)
	dest := vs.Spec.Http[0].Route[0].Destination
	assert.Equal(t, "klm-events.kcp-system.svc.cluster.local", dest.Host)
	assert.Equal(t, uint32(8082), dest.Port.Number)
	retries := vs.Spec.Http[0].Retries
	require.NotNil(t, retries, "the gateway retries what a replica could not take, not the agent")
	assert.Equal(t, int32(3), retries.Attempts)
	assert.Equal(t, "connect-failure,refused-stream,reset,503", retries.RetryOn)
	assert.Equal(t, 5*time.Second, retries.PerTryTimeout.AsDuration())

	require.NoError(t, kcp.Client.Delete(t.Context(), w))
	require.Eventually(t, func() bool {
		_, err := getWatcher(t, "kyma-watcher")
		verr := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "kyma-watcher"}, &networkingv1.VirtualService{})
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(verr)
	}, timeout, tick, "the VirtualService goes with its Watcher")
}

func TestWatcherWithoutGatewayIsError(t *testing.T) {
	newWatcher(t, "lonely-watcher", "telemetry", map[string]string{"gateway": "nonexistent"})
	require.Eventually(t, func() bool {
		w, err := getWatcher(t, "lonely-watcher")
		return err == nil && w.Status.State == shared.StateError
	}, timeout, tick)
	w, err := getWatcher(t, "lonely-watcher")
	require.NoError(t, err)
	cond := meta.FindStatusCondition(w.Status.Conditions, v1beta2.ConditionVirtualService)
	require.NotNil(t, cond)
	assert.Equal(t, `no Istio Gateway in namespace kcp-system matches selector "gateway=nonexistent"`, cond.Message)
}
