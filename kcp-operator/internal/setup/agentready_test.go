package setup_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// agentReasons records every reason the SKRWebhook condition of Kyma name
// showed, in order, as a watch saw them.
type agentReasons struct {
	mu   sync.Mutex
	seen []string
}

func (a *agentReasons) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

// newSharedRuntimeKyma creates Kyma name whose runtime is the suite's
// runtime API server, in namespace name there, and watches its condition.
func newSharedRuntimeKyma(t *testing.T, name string) *agentReasons {
	t.Helper()
	c, err := client.NewWithWatch(kcp.Config, client.Options{Scheme: kcp.Scheme})
	require.NoError(t, err)
	w, err := c.Watch(t.Context(), &v1beta2.KymaList{}, client.InNamespace(ns),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	reasons := &agentReasons{}
	go func() {
		for ev := range w.ResultChan() {
			k, ok := ev.Object.(*v1beta2.Kyma)
			if !ok {
				continue
			}
			if cond := meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionSKRWebhook); cond != nil {
				reasons.mu.Lock()
				if n := len(reasons.seen); n == 0 || reasons.seen[n-1] != cond.Reason {
					reasons.seen = append(reasons.seen, cond.Reason)
				}
				reasons.mu.Unlock()
			}
		}
	}()
	kubeconfig, err := runtimeEnv.Kubeconfig("lifecycle-manager", "system:masters")
	require.NoError(t, err)
	require.NoError(t, kcp.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + name, Namespace: ns, Labels: map[string]string{shared.KymaNameLabel: name}},
		Data:       map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}))
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: ns,
		Labels:      map[string]string{shared.RuntimeIDLabel: "runtime-" + name},
		Annotations: map[string]string{shared.SyncNamespaceAnnotation: name},
	}, Spec: v1beta2.KymaSpec{Channel: "regular"}}
	require.NoError(t, kcp.Client.Create(t.Context(), kyma))
	t.Cleanup(func() { _ = kcp.Client.Delete(t.Context(), kyma) })
	return reasons
}

// TestNewAgentIsNotReportedNotReadyAtOnce: a new agent is never available
// the moment it is applied; reporting that would cost each new Kyma a
// write and a reconcile. One that becomes available soon goes straight to
// AgentReady.
func TestNewAgentIsNotReportedNotReadyAtOnce(t *testing.T) {
	reasons := newSharedRuntimeKyma(t, "prompt")
	require.Eventually(t, func() bool { // the kubelet's part, at once
		return testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, "prompt", agent.Fullname("prompt")) == nil
	}, timeout, 10*time.Millisecond, "the agent's Deployment is applied")
	require.Eventually(t, func() bool { return slices.Contains(reasons.all(), "AgentReady") }, timeout, tick)
	assert.Equal(t, []string{"AgentReady"}, reasons.all())
}

// TestUnavailableAgentIsReported: an agent still unavailable a retry
// interval (here 500 ms) after its Deployment was created is reported; not
// before.
func TestUnavailableAgentIsReported(t *testing.T) {
	reasons := newSharedRuntimeKyma(t, "stuck")
	dep := &appsv1.Deployment{}
	require.Eventually(t, func() bool {
		return runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "stuck", Name: agent.Fullname("stuck")}, dep) == nil
	}, timeout, 10*time.Millisecond, "the agent's Deployment is applied")
	applied := time.Now()
	require.Eventually(t, func() bool { return slices.Contains(reasons.all(), "AgentNotReady") }, timeout, 10*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(applied), 400*time.Millisecond, "reported only after the retry interval")
	k := &v1beta2.Kyma{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "stuck"}, k))
	assert.Contains(t, meta.FindStatusCondition(k.Status.Conditions, v1beta2.ConditionSKRWebhook).Message, "not available")
	assert.NotEqual(t, shared.StateReady, k.Status.State)
}
