package setup_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/controller/watcher"
	"github.com/lifecycle-manager/kcp-operator/internal/setup"
)

// TestWatchersSayWhatDirectModeDid: with the listener in direct mode no
// VirtualService is made, and each Watcher's status says so (kubectl get
// watchers shows a STATE), a Watcher without a manager is Error, and one
// left with the finalizer of a gateway-mode run is let go.
func TestWatchersSayWhatDirectModeDid(t *testing.T) {
	condition := func(name string) (string, *metav1.Condition) {
		w := &v1beta2.Watcher{}
		if err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, w); err != nil {
			return "", nil
		}
		return string(w.Status.State), meta.FindStatusCondition(w.Status.Conditions, v1beta2.ConditionVirtualService)
	}
	require.Eventually(t, func() bool {
		state, cond := condition("klm-watcher")
		return state == string(shared.StateReady) && cond != nil && cond.Reason == watcher.ReasonDirectMode
	}, timeout, tick, "the suite's Watcher is Ready, its condition naming direct mode")
	_, cond := condition("klm-watcher")
	assert.Equal(t, metav1.ConditionFalse, cond.Status, "no VirtualService")
	assert.Contains(t, cond.Message, "/v2/"+setup.KymaManager+"/event")

	nameless := &v1beta2.Watcher{
		ObjectMeta: metav1.ObjectMeta{Name: "nameless-watcher", Namespace: ns, Finalizers: []string{shared.WatcherFinalizer}},
		Spec: v1beta2.WatcherSpec{
			ServiceInfo:     v1beta2.Service{Name: "klm-events", Namespace: ns, Port: 8082},
			ResourceToWatch: v1beta2.WatchableGVR{Group: "operator.kyma-project.io", Version: "v1beta2", Resource: "kymas"},
			Field:           v1beta2.FieldSpec,
		},
	}
	require.NoError(t, kcp.Client.Create(t.Context(), nameless))
	require.Eventually(t, func() bool {
		state, cond := condition("nameless-watcher")
		return state == string(shared.StateError) && cond != nil && cond.Reason == watcher.ReasonError
	}, timeout, tick, "a Watcher without a manager is Error")

	require.NoError(t, kcp.Client.Delete(t.Context(), nameless))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(kcp.Client.Get(t.Context(), client.ObjectKeyFromObject(nameless), &v1beta2.Watcher{}))
	}, timeout, tick, "a Watcher with a gateway-mode finalizer goes")
}
