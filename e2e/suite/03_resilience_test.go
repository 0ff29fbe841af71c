package suite

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/e2e/harness"
)

// writeAndSee makes one runtime write and waits until the KCP has it.
func writeAndSee(t *testing.T, rt *harness.Runtime, value string) {
	t.Helper()
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules[0].ControllerName = value })
	require.Eventually(t, func() bool { return kyma(t, rt).Spec.Modules[0].ControllerName == value },
		timeout, 20*time.Millisecond, "write %q reaches the KCP", value)
}

func TestCARotationLosesNoEvent(t *testing.T) {
	rt := runtime(0)
	ensureKyma(t, rt, harness.SampleModule)
	before, err := agentSecret(t, rt)
	require.NoError(t, err)
	oldIssuer := issuerOf(t, before.Data["tls.crt"])

	step(t, "Given a stream of runtime writes")
	step(t, "When a CA rotation is requested in the middle of it")
	bundle := &corev1.Secret{}
	key := client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca-bundle"}
	require.NoError(t, h.KCP.Client.Get(t.Context(), key, bundle))
	bundle.Annotations[shared.RotateCAAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)

	writes, rotated := 0, false
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		writes++
		if writes == 3 {
			require.NoError(t, h.KCP.Client.Update(t.Context(), bundle))
		}
		writeAndSee(t, rt, fmt.Sprintf("write-%d", writes))
		if s, err := agentSecret(t, rt); err == nil && issuerOf(t, s.Data["tls.crt"]) != oldIssuer {
			rotated = true
			if writes > 3+5 {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	step(t, "Then the agent's certificate comes from the new CA, and every one of the %d writes reached the KCP", writes)
	require.True(t, rotated, "the agent's certificate was re-issued by the new CA")
	after, err := agentSecret(t, rt)
	require.NoError(t, err)
	cas, err := pki.ParseCerts(after.Data["ca.crt"])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(cas), 2, "the old CA stays trusted during the rotation")
}

func issuerOf(t *testing.T, certPEM []byte) string {
	t.Helper()
	certs, err := pki.ParseCerts(certPEM)
	require.NoError(t, err)
	return string(certs[0].AuthorityKeyId)
}

func TestTheListenerDownForThirtySecondsLosesNothing(t *testing.T) {
	rt := runtime(0)
	ensureKyma(t, rt, harness.SampleModule)
	step(t, "Given the operator (and so the listener) stopped")
	require.NoError(t, h.StopOperator(t.Context()))
	stopped := time.Now()

	step(t, "When the runtime keeps changing for 30 seconds")
	last := ""
	for i := 0; time.Since(stopped) < 30*time.Second; i++ {
		last = fmt.Sprintf("offline-%d", i)
		updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules[0].ControllerName = last })
		time.Sleep(2 * time.Second)
	}
	assert.NotEqual(t, last, kyma(t, rt).Spec.Modules[0].ControllerName, "nothing reached the KCP while it was down")

	step(t, "Then, once the operator runs again, the agent's queued event brings the last change")
	restarted := time.Now()
	require.NoError(t, h.StartOperator(t.Context()))
	require.Eventually(t, func() bool { return kyma(t, rt).Spec.Modules[0].ControllerName == last }, timeout, tick)
	t.Logf("operator start → last offline change in the KCP: %v", time.Since(restarted).Round(time.Millisecond))
	eventuallyKyma(t, rt, "Ready again", func(k *v1beta2.Kyma) bool { return ready(k) && pushReady(k) })
}

func TestForeignAndUnknownCertificatesAreRejected(t *testing.T) {
	ensureKyma(t, runtime(0), harness.SampleModule)
	rejected := metric(t, "listener_verification_failures_total", `reason="unknown_runtime"`)
	foreignCA := metric(t, "listener_verification_failures_total", `reason="unknown_authority"`)

	step(t, "Given a certificate of the KCP's CA for a runtime that has no Kyma")
	cert, key := issue(t, kcpCA(t), "runtime-that-does-not-exist")
	step(t, "When it posts an event")
	code, err := postEvent(t.Context(), t, cert, key)
	step(t, "Then the listener answers 403 and counts it")
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, rejected+1, metric(t, "listener_verification_failures_total", `reason="unknown_runtime"`))

	step(t, "Given a certificate of another CA with a known runtime's ID")
	other, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	foreign, err := pki.NewCA("not the KCP", other, time.Now(), time.Hour)
	require.NoError(t, err)
	cert, key = issue(t, foreign, runtime(0).RuntimeID)
	_, err = postEvent(t.Context(), t, cert, key)
	step(t, "Then the TLS handshake fails, so nothing can be enqueued")
	require.Error(t, err)
	step(t, "And the listener, not the network, refused it and counted why")
	// The delivered counter is no witness here: the runtime's real agent
	// may forward its own events at the same moment.
	assert.Equal(t, foreignCA+1, metric(t, "listener_verification_failures_total", `reason="unknown_authority"`))
}

// TestThePublicAgentGetsTheAnswerItExpects sends what the public
// runtime-watcher agent sends (its body, with and without the owner field
// of older versions, posted the way it posts: http.Client.Post with
// application/json over HTTP/1.1) and checks for the one answer that
// agent counts as success: 200. Any other code, 202 included, makes it log
// an error, count a failure and write "kcp request failed" into its
// admission answer for every event.
func TestThePublicAgentGetsTheAnswerItExpects(t *testing.T) {
	rt := runtime(0)
	ensureKyma(t, rt, harness.SampleModule)
	step(t, "Given the runtime's own certificate (the agent's Secret)")
	s, err := agentSecret(t, rt)
	require.NoError(t, err)
	c := publicAgentClient(t, s.Data["tls.crt"], s.Data["tls.key"])
	url := "https://" + h.ListenerAddr + "/v2/lifecycle-manager/event"
	for name, body := range map[string]string{
		"current": `{"watched":{"Namespace":"kyma-system","Name":"default"},` +
			`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`,
		"with owner": `{"owner":{"Namespace":"kcp-system","Name":"` + rt.KymaName + `"},` +
			`"watched":{"Namespace":"kyma-system","Name":"default"},` +
			`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`,
	} {
		step(t, "When it posts the public agent's %s body as that agent does", name)
		resp, err := c.Post(url, "application/json", strings.NewReader(body)) //nolint:noctx // exactly as the public agent posts
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		step(t, "Then the listener answers 200, the only code that agent takes for success")
		assert.Equal(t, http.StatusOK, resp.StatusCode, name)
		assert.Equal(t, "HTTP/1.1", resp.Proto, "the public agent's transport speaks HTTP/1.1")
	}
}

func TestAnUnreachableRuntimeFailsAloneAndRecovers(t *testing.T) {
	if !h.Local {
		t.Skip("clusters mode: taking a runtime off the network needs the local harness's proxy")
	}
	down, other := runtime(0), runtime(1)
	ensureKyma(t, down, harness.SampleModule)
	ensureKyma(t, other)

	step(t, "Given runtime %s off the network (its API server unreachable for the operator)", down.Name)
	down.Proxy.Cut()
	defer func() { _ = down.Proxy.Restore() }()
	step(t, "When its Kyma is reconciled")
	updateKyma(t, down, func(k *v1beta2.Kyma) { k.Labels["e2e/touch"] = "unreachable" })
	step(t, "Then it is Error, with a message that says why")
	// A reconcile in flight at the cut reads an unexpected EOF; the retry
	// (--requeue-error=3s) finds the connection refused.
	eventuallyKyma(t, down, "Error: connection refused", func(k *v1beta2.Kyma) bool {
		return k.Status.State == shared.StateError && strings.Contains(k.Status.LastOperation.Operation, "connection refused")
	})

	step(t, "And the other runtime is unaffected: its admin's edits still arrive")
	updateRuntimeKyma(t, other, func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	eventuallyKyma(t, other, "the edit", func(k *v1beta2.Kyma) bool { return k.Spec.Channel == "fast" && ready(k) })
	updateRuntimeKyma(t, other, func(k *v1beta2.Kyma) { k.Spec.Channel = "regular" })

	step(t, "When the runtime is reachable again, it recovers by itself")
	require.NoError(t, down.Proxy.Restore())
	eventuallyKyma(t, down, "Ready", ready)
}
