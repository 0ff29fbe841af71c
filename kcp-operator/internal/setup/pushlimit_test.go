package setup_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
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
// lets the test's burst through. The rate is low so that even a slow
// machine (the race detector beside other load sends ~40 events/s) spends
// the burst faster than the rate refills it; the burst is far above what
// the suite's runtimes send.
const (
	suiteRuntimeRate  = 2
	suiteRuntimeBurst = 300
)

// TestListenerLimitsEachRuntime: Options.ListenerRuntimeRate and
// ListenerRuntimeBurst reach the embedded listener. A runtime that
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

	start := time.Now()
	passed, refused := flood(t, flooder, 4*suiteRuntimeBurst)
	passed++ // the first event above
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

// flood posts up to n events from c with several senders at once, so that
// they outrun the rate even on a slow machine, and stops at the first 429.
// It returns how many passed and the 429's header (nil if none came).
func flood(t *testing.T, c *http.Client, n int) (int, http.Header) {
	t.Helper()
	const senders = 8
	var (
		mu       sync.Mutex
		sent     int
		passed   int
		refused  http.Header
		failures []string
		wg       sync.WaitGroup
	)
	next := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if sent >= n || refused != nil || len(failures) > 0 {
			return false
		}
		sent++
		return true
	}
	for range senders {
		wg.Go(func() {
			for next() {
				status, header, err := postPublicEvent(t.Context(), c)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case status == http.StatusTooManyRequests:
					if refused == nil {
						refused = header
					}
				case status == http.StatusOK:
					passed++
				default:
					failures = append(failures, "answered "+strconv.Itoa(status))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, failures, "every event is answered 200 or 429")
	return passed, refused
}

// postPublicEvent posts the public agent's event and drains the answer; it
// never fails the test, so that senders beside the test's goroutine can
// use it.
func postPublicEvent(ctx context.Context, c *http.Client) (int, http.Header, error) {
	req, err := newPublicEventRequest(ctx)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, resp.Body.Close()
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
	status, header, err := postPublicEvent(t.Context(), c)
	require.NoError(t, err)
	return status, header
}

// publicEventRequest is the public runtime-watcher agent's event of the
// runtime Kyma.
func publicEventRequest(t *testing.T) *http.Request {
	t.Helper()
	req, err := newPublicEventRequest(t.Context())
	require.NoError(t, err)
	return req
}

func newPublicEventRequest(ctx context.Context) (*http.Request, error) {
	body := `{"watched":{"Namespace":"kyma-system","Name":"default"},"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`
	return http.NewRequestWithContext(ctx, http.MethodPost,
		"https://localhost:"+strconv.Itoa(listenerPort)+"/v2/lifecycle-manager/event", bytes.NewBufferString(body))
}
