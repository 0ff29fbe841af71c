package suite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// TestAKilledAgentsChangesReachTheKCP: the agent's queue lives in memory,
// so a SIGKILLed agent loses the events it held for a KCP it could not
// reach. The agent that starts after it sends a resync of the runtime's
// Kyma first, and the KCP reconciles the runtime: the changes arrive at
// once, not at the resync hours later (--requeue-success=10h here).
func TestAKilledAgentsChangesReachTheKCP(t *testing.T) {
	if !h.Local {
		t.Skip("clusters mode: killing the agent needs the local harness's process")
	}
	rt := runtime(0)
	ensureKyma(t, rt)

	step(t, "Given the operator stopped, and the runtime admin changing the channel meanwhile")
	require.NoError(t, h.StopOperator(t.Context()))
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	step(t, "When the agent, holding that change, is SIGKILLed, and the operator starts again")
	killAgent(t, rt)
	require.NoError(t, h.StartOperator(t.Context()))
	step(t, "Then the change reaches the KCP")
	eventuallyKyma(t, rt, "channel fast", func(k *v1beta2.Kyma) bool { return k.Spec.Channel == "fast" })

	// The operator reconciles every Kyma when it starts, which covers the
	// case above without the agent. The KCP away while the operator runs
	// is the case only the agent can cover.
	step(t, "Given the agent reaching the listener through a proxy, and the operator running")
	proxy, direct, err := h.RouteAgentThroughProxy(t.Context(), rt)
	require.NoError(t, err)
	defer func() { require.NoError(t, direct()) }()
	eventuallyKyma(t, rt, "Ready with the agent", func(k *v1beta2.Kyma) bool { return ready(k) && pushReady(k) })
	writeChannel(t, rt, "regular")

	step(t, "When the listener is cut off from the agent, the admin changes the channel, and the agent is SIGKILLed")
	proxy.Cut()
	// The operator reads the runtime once more 500 ms after each event:
	// that read must be over, or it would find
	// the change below without the agent.
	settled(t, rt, 3*time.Second)
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	killAgent(t, rt)
	require.Never(t, func() bool { return kyma(t, rt).Spec.Channel == "fast" }, 3*time.Second, tick,
		"nothing brings the change to the KCP while the agent cannot reach it")

	step(t, "Then, once the listener is reachable again, the restarted agent's resync brings the change")
	require.NoError(t, proxy.Restore())
	eventuallyKyma(t, rt, "channel fast", func(k *v1beta2.Kyma) bool { return k.Spec.Channel == "fast" })
	writeChannel(t, rt, "regular")
}

// killAgent SIGKILLs the runtime's agent and waits until the kubelet has
// started a new one.
func killAgent(t *testing.T, rt *harness.Runtime) {
	t.Helper()
	before := rt.AgentPid()
	require.NotZero(t, before, "%s runs an agent", rt.Name)
	require.NoError(t, h.KillAgent(rt))
	require.Eventually(t, func() bool { pid := rt.AgentPid(); return pid != 0 && pid != before }, timeout, tick,
		"the kubelet starts the agent again")
}

// settled waits until the KCP Kyma has not changed for quiet.
func settled(t *testing.T, rt *harness.Runtime, quiet time.Duration) {
	t.Helper()
	last, since := "", time.Now()
	require.Eventually(t, func() bool {
		if rv := kyma(t, rt).ResourceVersion; rv != last {
			last, since = rv, time.Now()
		}
		return time.Since(since) >= quiet
	}, timeout, tick, "Kyma %s settles", rt.KymaName)
}

// writeChannel sets the runtime Kyma's channel and waits until the KCP has it.
func writeChannel(t *testing.T, rt *harness.Runtime, channel string) {
	t.Helper()
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Channel = channel })
	eventuallyKyma(t, rt, "channel "+channel, func(k *v1beta2.Kyma) bool { return k.Spec.Channel == channel })
}
