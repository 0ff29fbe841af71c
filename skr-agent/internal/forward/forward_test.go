package forward_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/forward"
	"github.com/lifecycle-manager/skr-agent/internal/kcp"
	"github.com/lifecycle-manager/skr-agent/internal/kcptest"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
	"github.com/lifecycle-manager/skr-agent/internal/queue"
)

var resync = event.NewKey("lifecycle-manager", event.KymaGVK, "kyma-system", "default")

func key(name string) event.Key {
	return event.NewKey("m", event.GVK{Version: "v1", Kind: "ConfigMap"}, "ns", name)
}

type setup struct {
	receiver  *kcptest.Receiver
	queue     *queue.Queue
	metrics   *metrics.Metrics
	forwarder *forward.Forwarder
}

// newSetup wires a forwarder to a real mTLS receiver; it is not started.
func newSetup(t *testing.T, capacity int, backoff forward.Backoff) *setup {
	t.Helper()
	ca := pkitest.NewCA(t, "kcp-ca")
	srvCert, srvKey := ca.Issue("listener", pki.UsageServer)
	r := kcptest.Start(t, srvCert, srvKey, ca.PEM())
	cert, k := ca.Issue("runtime-1", pki.UsageClient)
	kp, err := tlsreload.NewKeyPair(cert, k)
	require.NoError(t, err)
	roots, err := tlsreload.NewBundle(ca.PEM())
	require.NoError(t, err)
	client := kcp.NewClient(kcp.Options{BaseURL: "https://" + r.Addr, Contract: "v2",
		TLS: tlsreload.ClientConfig(kp, roots, "127.0.0.1"), Timeout: 5 * time.Second, Conns: 2})
	q, err := queue.New(capacity, resync)
	require.NoError(t, err)
	m, err := metrics.New(prometheus.NewRegistry(), q.Len)
	require.NoError(t, err)
	f := forward.New(q, client, forward.Options{Workers: 2, Backoff: backoff, Resync: resync, Metrics: m, Log: logr.Discard()})
	return &setup{receiver: r, queue: q, metrics: m, forwarder: f}
}

var fast = forward.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}

func (s *setup) start(t *testing.T) {
	t.Helper()
	s.forwarder.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		s.forwarder.Shutdown(ctx)
	})
}

func (s *setup) failed(reason string) float64 {
	return testutil.ToFloat64(s.metrics.EventsFailed.WithLabelValues(reason))
}

// answerInTurn makes the receiver answer with codes in turn, the last one
// from then on; calls counts the requests.
func (s *setup) answerInTurn(codes ...int) (calls func() int) {
	var mu sync.Mutex
	n := 0
	s.receiver.SetAnswer(func(*http.Request) kcptest.Answer {
		mu.Lock()
		defer mu.Unlock()
		n++
		return kcptest.Answer{Status: codes[min(n, len(codes))-1]}
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

func names(events []kcptest.Received) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Body.Watched.Name)
	}
	return out
}

func TestDeliversInTheBackground(t *testing.T) {
	s := newSetup(t, 100, fast)
	s.start(t)
	for i := range 10 {
		s.forwarder.Enqueue(key(fmt.Sprint(i)), "")
	}
	require.Eventually(t, func() bool { return s.receiver.Count() == 10 }, 10*time.Second, 5*time.Millisecond)
	assert.ElementsMatch(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, names(s.receiver.Events()))
	// The receiver counts before its answer reaches the agent.
	require.Eventually(t, func() bool { return testutil.ToFloat64(s.metrics.EventsForwarded) == 10 }, time.Second, time.Millisecond)
	assert.Positive(t, testutil.ToFloat64(s.metrics.LastDelivery))
	assert.Equal(t, 0, s.queue.Len())
}

func TestKCPDownThenUp(t *testing.T) {
	s := newSetup(t, 100, fast)
	s.receiver.Stop()
	s.start(t)
	for range 5 {
		s.forwarder.Enqueue(key("a"), "") // one object written five times
	}
	s.forwarder.Enqueue(key("b"), "")
	require.Eventually(t, func() bool { return s.failed(metrics.ReasonTransport) >= 3 }, 10*time.Second, 5*time.Millisecond,
		"the agent keeps retrying while the KCP is down")
	require.Eventually(t, func() bool { return s.queue.Len() == 2 }, 10*time.Second, 5*time.Millisecond,
		"nothing is dropped, and the writes to a become one event")

	s.receiver.Restart()
	require.Eventually(t, func() bool { return s.receiver.Count() == 2 }, 10*time.Second, 5*time.Millisecond)
	assert.ElementsMatch(t, []string{"a", "b"}, names(s.receiver.Events()))
	assert.GreaterOrEqual(t, testutil.ToFloat64(s.metrics.EventsRetried), 3.0)
	assert.GreaterOrEqual(t, testutil.ToFloat64(s.metrics.EventsCoalesced), 3.0, "the first write may be in flight already, the second then waits")
}

func TestServerErrorsAreRetried(t *testing.T) {
	s := newSetup(t, 100, fast)
	s.answerInTurn(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusOK)
	s.start(t)
	s.forwarder.Enqueue(key("a"), "")
	require.Eventually(t, func() bool { return s.receiver.Count() == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.InDelta(t, 2, s.failed(metrics.ReasonServerError), 0)
	assert.InDelta(t, 2, testutil.ToFloat64(s.metrics.EventsRetried), 0)
}

func TestRetryAfterIsHonoured(t *testing.T) {
	s := newSetup(t, 100, fast)
	var mu sync.Mutex
	var at []time.Time
	s.receiver.SetAnswer(func(*http.Request) kcptest.Answer {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Now())
		if len(at) == 1 {
			return kcptest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "1"}
		}
		return kcptest.Answer{Status: http.StatusOK}
	})
	s.start(t)
	s.forwarder.Enqueue(key("a"), "")
	require.Eventually(t, func() bool { return s.receiver.Count() == 1 }, 10*time.Second, 5*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, at, 2)
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), 900*time.Millisecond, "waited as asked, not the 10ms backoff")
	assert.InDelta(t, 1, s.failed(metrics.ReasonThrottled), 0)
}

// TestARefusedCertificateIsRetried: the listener refuses the agent's
// certificate (401: denied after a leak, or expired) until the operator's
// replacement is mounted; the event waits for it instead of being lost.
func TestARefusedCertificateIsRetried(t *testing.T) {
	s := newSetup(t, 100, fast)
	s.answerInTurn(http.StatusUnauthorized, http.StatusOK)
	s.start(t)
	s.forwarder.Enqueue(key("a"), "")
	require.Eventually(t, func() bool { return s.receiver.Count() == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.InDelta(t, 1, s.failed(metrics.ReasonUnauthorized), 0)
	assert.Zero(t, s.failed(metrics.ReasonRejected))
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	s := newSetup(t, 100, fast)
	calls := s.answerInTurn(http.StatusBadRequest)
	s.start(t)
	s.forwarder.Enqueue(key("a"), "")
	require.Eventually(t, func() bool { return s.failed(metrics.ReasonRejected) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return s.queue.Len() == 0 }, time.Second, time.Millisecond)
	s.forwarder.Enqueue(key("b"), "") // a later event still goes out: the queue is not stuck
	require.Eventually(t, func() bool { return s.failed(metrics.ReasonRejected) == 2 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, 2, calls(), "each rejected event was sent once")
	assert.Zero(t, testutil.ToFloat64(s.metrics.EventsRetried))
}

func TestOverflowSendsOneResyncWhenTheKCPIsBack(t *testing.T) {
	s := newSetup(t, 3, fast)
	s.receiver.Stop()
	for i := range 10 {
		s.forwarder.Enqueue(key(fmt.Sprint(i)), "")
	}
	assert.InDelta(t, 7, s.failed(metrics.ReasonOverflow), 0, "ten objects, room for three")
	s.start(t)
	require.Eventually(t, func() bool { return s.failed(metrics.ReasonTransport) >= 1 }, 10*time.Second, 5*time.Millisecond)
	s.receiver.Restart()
	require.Eventually(t, func() bool { return s.receiver.Count() == 4 }, 10*time.Second, 5*time.Millisecond)
	events := s.receiver.Events()
	assert.ElementsMatch(t, []string{"default", "0", "1", "2"}, names(events))
	for _, e := range events {
		if e.Body.Watched.Name == "default" {
			assert.Equal(t, resync.Body(), e.Body)
			assert.Equal(t, "/v2/lifecycle-manager/event", e.Path)
		}
	}
	require.Eventually(t, func() bool { return testutil.ToFloat64(s.metrics.Resyncs) == 1 }, time.Second, time.Millisecond)
}

func TestResyncIsDeliveredAndCounted(t *testing.T) {
	s := newSetup(t, 3, fast)
	s.forwarder.Resync()
	s.forwarder.Resync()
	assert.Equal(t, 1, s.queue.Len(), "one resync stands for any number of changes")
	s.start(t)
	require.Eventually(t, func() bool { return s.receiver.Count() == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, resync.Body(), s.receiver.Events()[0].Body)
	require.Eventually(t, func() bool { return testutil.ToFloat64(s.metrics.Resyncs) == 1 }, time.Second, time.Millisecond)
	assert.Zero(t, s.failed(metrics.ReasonOverflow), "the caller counts why it needed the resync")
}

func TestShutdownDrainsTheQueue(t *testing.T) {
	s := newSetup(t, 100, fast)
	s.receiver.SetAnswer(func(*http.Request) kcptest.Answer {
		return kcptest.Answer{Status: http.StatusOK, Delay: 20 * time.Millisecond}
	})
	s.forwarder.Start()
	for i := range 20 {
		s.forwarder.Enqueue(key(fmt.Sprint(i)), "")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	assert.Zero(t, s.forwarder.Shutdown(ctx))
	assert.Equal(t, int64(20), s.receiver.Count(), "everything queued before shutdown was delivered")
}

func TestShutdownIsBounded(t *testing.T) {
	s := newSetup(t, 100, fast)
	s.receiver.Stop()
	s.forwarder.Start()
	for i := range 5 {
		s.forwarder.Enqueue(key(fmt.Sprint(i)), "")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	assert.Equal(t, 5, s.forwarder.Shutdown(ctx))
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.InDelta(t, 5, s.failed(metrics.ReasonShutdown), 0)
}

// TestShutdownStopsWorkersStuckOnASlowKCP: when the drain time runs out
// while events wait and the KCP answers slowly, the workers stop instead of
// cycling the queue.
func TestShutdownStopsWorkersStuckOnASlowKCP(t *testing.T) {
	s := newSetup(t, 1000, fast)
	s.receiver.SetAnswer(func(*http.Request) kcptest.Answer {
		return kcptest.Answer{Status: http.StatusOK, Delay: time.Second}
	})
	s.forwarder.Start()
	for i := range 100 {
		s.forwarder.Enqueue(key(fmt.Sprint(i)), "")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	done := make(chan int)
	go func() { done <- s.forwarder.Shutdown(ctx) }()
	select {
	case left := <-done:
		assert.Equal(t, 100, left, "nothing was delivered within the drain time")
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return: the workers kept going")
	}
}

func TestTheEventCarriesThePreWriteVersion(t *testing.T) {
	s := newSetup(t, 10, fast)
	s.forwarder.Enqueue(key("a"), "41")
	s.forwarder.Enqueue(key("a"), "42")
	s.start(t)
	require.Eventually(t, func() bool { return len(s.receiver.Events()) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, s.receiver.Events()[0].Raw, `"oldResourceVersion":"42"`, "the newer of the merged writes")
}
