package setup_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
)

// The suite's listener limit per runtime: below the listener's defaults
// (100/s, 1000), so that a listener built without the operator's flags
// lets the test's burst through.
const (
	suiteRuntimeRate  = 50
	suiteRuntimeBurst = 300
)

// TestListenerLimitsEachRuntime: --listener-runtime-rate and
// --listener-runtime-burst reach the embedded listener. A runtime that
// sends without pause gets 429 with a Retry-After once its burst and what
// the rate refilled meanwhile are spent; another runtime's event still
// passes.
func TestListenerLimitsEachRuntime(t *testing.T) {
	waitForAgent(t)
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "flooder", Namespace: ns, Labels: map[string]string{
		shared.RuntimeIDLabel: "runtime-flooder", shared.SkipReconciliationLabel: "true",
	}}, Spec: v1beta2.KymaSpec{Channel: "regular"}}
	require.NoError(t, kcp.Client.Create(t.Context(), kyma))
	t.Cleanup(func() { _ = kcp.Client.Delete(t.Context(), kyma) })
	flooder := listenerClient(t, kcpCA(t), "runtime-flooder")
	require.Eventually(t, func() bool { return postEvent(t, flooder) == http.StatusOK }, timeout, tick,
		"the listener knows the flooding runtime")

	start, passed := time.Now(), 1
	var refused http.Header
	for range 4 * suiteRuntimeBurst {
		status, header := postEventAnswer(t, flooder)
		if status == http.StatusTooManyRequests {
			refused = header
			break
		}
		require.Equal(t, http.StatusOK, status)
		passed++
	}
	elapsed := time.Since(start)
	require.NotNil(t, refused, "a runtime sending %d events at once is refused", 4*suiteRuntimeBurst)
	assert.GreaterOrEqual(t, passed, suiteRuntimeBurst, "the burst passes")
	assert.LessOrEqual(t, float64(passed), suiteRuntimeBurst+suiteRuntimeRate*(elapsed.Seconds()+1),
		"no more than the burst and the rate over %s", elapsed)
	retry, err := strconv.Atoi(refused.Get("Retry-After"))
	require.NoError(t, err, "a Retry-After in seconds")
	assert.GreaterOrEqual(t, retry, 1)
	assert.Positive(t, counter(t, "listener_throttled_total", "reason", "runtime_rate"))

	assert.Equal(t, http.StatusOK, postEvent(t, listenerClient(t, kcpCA(t), runtimeID)), "another runtime is not limited")
}

func listenerClient(t *testing.T, issuer *pki.CA, cn string) *http.Client {
	t.Helper()
	bundle, err := op.PKI.TrustBundle(t.Context())
	require.NoError(t, err)
	roots, err := tlsreload.NewBundle(bundle)
	require.NoError(t, err)
	certPEM, keyPEM, err := issuer.Issue(pki.LeafRequest{CommonName: cn, Usage: pki.UsageClient, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: tlsreload.ClientConfig(kp, roots, "localhost")}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}

func postEvent(t *testing.T, c *http.Client) int {
	t.Helper()
	status, _ := postEventAnswer(t, c)
	return status
}

// postEventAnswer posts the public runtime-watcher payload and returns the
// answer's status and header; the body is read and closed, so the
// connection is reused.
func postEventAnswer(t *testing.T, c *http.Client) (int, http.Header) {
	t.Helper()
	resp, err := c.Do(publicEventRequest(t))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode, resp.Header
}

// publicEventRequest is the public runtime-watcher agent's event of the
// runtime Kyma.
func publicEventRequest(t *testing.T) *http.Request {
	t.Helper()
	body := `{"watched":{"Namespace":"kyma-system","Name":"default"},"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		"https://localhost:"+strconv.Itoa(listenerPort)+"/v2/lifecycle-manager/event", bytes.NewBufferString(body))
	require.NoError(t, err)
	return req
}
