package kcp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/kcp"
	"github.com/lifecycle-manager/skr-agent/internal/kcptest"
)

type setup struct {
	receiver *kcptest.Receiver
	client   *kcp.Client
	kp       *tlsreload.KeyPair
	ca       *pkitest.CA
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	ca := pkitest.NewCA(t, "kcp-ca")
	srvCert, srvKey := ca.Issue("listener", pki.UsageServer)
	r := kcptest.Start(t, srvCert, srvKey, ca.PEM())
	cert, key := ca.Issue("runtime-1", pki.UsageClient|pki.UsageServer)
	kp, err := tlsreload.NewKeyPair(cert, key)
	require.NoError(t, err)
	roots, err := tlsreload.NewBundle(ca.PEM())
	require.NoError(t, err)
	c := kcp.NewClient(kcp.Options{
		BaseURL: "https://" + r.Addr, Contract: "v2", TLS: tlsreload.ClientConfig(kp, roots, "127.0.0.1"),
		Timeout: 5 * time.Second, Conns: 2,
	})
	return &setup{receiver: r, client: c, kp: kp, ca: ca}
}

var key = event.NewKey("lifecycle-manager", event.KymaGVK, "kyma-system", "default")

func TestSendPostsTheEventOverMutualTLS(t *testing.T) {
	s := newSetup(t)
	require.NoError(t, s.client.Send(t.Context(), event.Event{Key: key}))
	require.NoError(t, s.client.Send(t.Context(), event.Event{Key: key}))
	events := s.receiver.Events()
	require.Len(t, events, 2)
	got := events[0]
	assert.Equal(t, "runtime-1", got.CN, "the runtime is known by its client certificate")
	assert.Equal(t, "/v2/lifecycle-manager/event", got.Path)
	assert.Equal(t, "HTTP/2.0", got.Proto)
	assert.Equal(t, key.Body(), got.Body)
	assert.JSONEq(t, `{"watched":{"Namespace":"kyma-system","Name":"default"},`+
		`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`, got.Raw)
	assert.Equal(t, int64(1), s.receiver.Conns(), "one long-lived connection")
}

// TestEverySuccessIsAccepted: our listener answers 200, as the public one
// does; listeners of ours before it answered 202. Both are delivered.
func TestEverySuccessIsAccepted(t *testing.T) {
	s := newSetup(t)
	for _, code := range []int{http.StatusOK, http.StatusAccepted} {
		s.receiver.SetAnswer(func(*http.Request) kcptest.Answer { return kcptest.Answer{Status: code} })
		assert.NoError(t, s.client.Send(t.Context(), event.Event{Key: key}), "answer %d", code)
	}
	assert.Len(t, s.receiver.Events(), 2)
}

func TestSendCarriesThePreWriteVersion(t *testing.T) {
	s := newSetup(t)
	require.NoError(t, s.client.Send(t.Context(), event.Event{Key: key, OldResourceVersion: "812"}))
	events := s.receiver.Events()
	require.Len(t, events, 1)
	assert.JSONEq(t, `{"watched":{"Namespace":"kyma-system","Name":"default"},`+
		`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"},"oldResourceVersion":"812"}`, events[0].Raw)
}

func TestAnswers(t *testing.T) {
	tests := []struct {
		name       string
		answer     kcptest.Answer
		retryable  bool
		retryAfter time.Duration
	}{
		{"bad request", kcptest.Answer{Status: http.StatusBadRequest}, false, 0},
		{"not found", kcptest.Answer{Status: http.StatusNotFound}, false, 0},
		{"unknown runtime", kcptest.Answer{Status: http.StatusForbidden}, false, 0},
		{"certificate refused, a new one is coming", kcptest.Answer{Status: http.StatusUnauthorized}, true, 0},
		{"redirect is not followed", kcptest.Answer{Status: http.StatusTemporaryRedirect}, false, 0},
		{"server error", kcptest.Answer{Status: http.StatusBadGateway}, true, 0},
		{"throttled", kcptest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "7"}, true, 7 * time.Second},
		{"unavailable with a date", kcptest.Answer{Status: http.StatusServiceUnavailable,
			RetryAfter: time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)}, true, 90 * time.Second},
		{"unreadable Retry-After", kcptest.Answer{Status: http.StatusTooManyRequests, RetryAfter: "soon"}, true, 0},
	}
	s := newSetup(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.receiver.SetAnswer(func(*http.Request) kcptest.Answer { return tt.answer })
			err := s.client.Send(t.Context(), event.Event{Key: key})
			require.Error(t, err)
			se, ok := kcp.AsStatusError(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tt.answer.Status, se.Code)
			assert.Equal(t, tt.retryable, se.Retryable())
			assert.InDelta(t, tt.retryAfter.Seconds(), se.RetryAfter.Seconds(), 2)
		})
	}
	assert.Empty(t, s.receiver.Events())
}

func TestTransportErrors(t *testing.T) {
	s := newSetup(t)
	s.receiver.Stop()
	err := s.client.Send(t.Context(), event.Event{Key: key})
	require.Error(t, err)
	_, isStatus := kcp.AsStatusError(err)
	assert.False(t, isStatus)

	// A server whose certificate does not chain to the roots.
	s = newSetup(t)
	other := pkitest.NewCA(t, "other")
	cert, key2 := other.Issue("runtime-1", pki.UsageClient)
	_, err = s.kp.Set(cert, key2)
	require.NoError(t, err)
	require.Error(t, s.client.Send(t.Context(), event.Event{Key: key}), "a client certificate of an unknown CA is refused")
}

func TestTimeout(t *testing.T) {
	ca := pkitest.NewCA(t, "kcp-ca")
	srvCert, srvKey := ca.Issue("listener", pki.UsageServer)
	r := kcptest.Start(t, srvCert, srvKey, ca.PEM())
	r.SetAnswer(func(*http.Request) kcptest.Answer {
		return kcptest.Answer{Status: http.StatusOK, Delay: 5 * time.Second}
	})
	cert, k := ca.Issue("runtime-1", pki.UsageClient)
	kp, err := tlsreload.NewKeyPair(cert, k)
	require.NoError(t, err)
	roots, err := tlsreload.NewBundle(ca.PEM())
	require.NoError(t, err)
	c := kcp.NewClient(kcp.Options{BaseURL: "https://" + r.Addr, Contract: "v2",
		TLS: tlsreload.ClientConfig(kp, roots, "127.0.0.1"), Timeout: 200 * time.Millisecond, Conns: 1})
	require.Error(t, c.Send(t.Context(), event.Event{Key: key}))
	assert.Empty(t, r.Events())
}

func TestRotatedClientCertificateIsUsedAfterReconnect(t *testing.T) {
	s := newSetup(t)
	require.NoError(t, s.client.Send(t.Context(), event.Event{Key: key}))
	cert, k := s.ca.Issue("runtime-1", pki.UsageClient)
	changed, err := s.kp.Set(cert, k)
	require.NoError(t, err)
	require.True(t, changed)
	s.client.Reconnect()
	require.NoError(t, s.client.Send(t.Context(), event.Event{Key: key}))
	events := s.receiver.Events()
	require.Len(t, events, 2)
	assert.NotEqual(t, events[0].Serial, events[1].Serial, "the new certificate was presented")
	assert.Equal(t, int64(2), s.receiver.Conns())
}
