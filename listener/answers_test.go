package listener_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
)

// acceptRuntime is the embedder's check in these tests: rt-unknown matches
// no Kyma, rt-flaky cannot be checked yet.
func acceptRuntime(_ context.Context, runtimeID string) error {
	switch runtimeID {
	case "rt-unknown":
		return listener.Reject("unknown_runtime", errors.New("no Kyma with this runtime ID"))
	case "rt-flaky":
		return errors.New("the Kyma cache is not synced yet")
	}
	return nil
}

// TestAnswers sends one request per row over real mTLS to a running server
// and checks the status, the headers, that the body is never echoed, and
// what reached the consumer.
func TestAnswers(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.AcceptRuntime = acceptRuntime
	cfg.MaxBodyBytes = 1024
	srv := start(t, cfg)
	events := consume(t, srv.srv)
	base := "https://" + srv.addr

	clients := map[string]*http.Client{}
	for _, id := range []string{"rt-1", "rt-unknown", "rt-flaky"} {
		leaf := f.ca.Client(id)
		clients[id] = mtlsClient(t, f.ca, &leaf)
	}
	nameless := f.ca.IssueWithoutCN()
	clients["nameless"] = mtlsClient(t, f.ca, &nameless)
	secret := `{"watched": "SECRET-MARKER-` + strings.Repeat("x", 20) + `"`
	huge := eventBody(strings.Repeat("a", 200)) + strings.Repeat(" ", 1024)

	tests := []struct {
		name       string
		client     string
		method     string
		path       string
		body       any
		wantCode   int
		wantHeader map[string]string
		wantBody   string
		wantEvent  bool
		// wantVersion is the event's OldResourceVersion.
		wantVersion string
	}{
		{name: "accepted v2", path: "/v2/klm/event", body: kymaBody, wantCode: http.StatusOK, wantEvent: true},
		{name: "accepted v1 with owner", path: "/v1/klm/event", body: `{"owner":{"Name":"k"},` + kymaBody[1:], wantCode: http.StatusOK, wantEvent: true},
		{
			name: "accepted with the pre-write version", path: "/v2/klm/event", body: kymaBody[:len(kymaBody)-1] + `,"oldResourceVersion":"812"}`,
			wantCode: http.StatusOK, wantEvent: true, wantVersion: "812",
		},
		{name: "malformed JSON, not echoed", path: "/v2/klm/event", body: secret, wantCode: http.StatusBadRequest, wantBody: "not a JSON event"},
		{name: "missing field", path: "/v2/klm/event", body: `{"watched":{"Name":"a"}}`, wantCode: http.StatusBadRequest, wantBody: "missing field watchedGvk.version"},
		{name: "body over the limit with Content-Length", path: "/v2/klm/event", body: huge, wantCode: http.StatusRequestEntityTooLarge, wantBody: "larger than 1024"},
		{
			name: "body over the limit without Content-Length", path: "/v2/klm/event",
			body: iotest.OneByteReader(strings.NewReader(huge)), wantCode: http.StatusRequestEntityTooLarge,
		},
		{name: "body within the limit without Content-Length", path: "/v2/klm/event", body: iotest.OneByteReader(strings.NewReader(kymaBody)), wantCode: http.StatusOK, wantEvent: true},
		{name: "unknown manager", path: "/v2/nobody/event", body: kymaBody, wantCode: http.StatusNotFound},
		{name: "unknown contract", path: "/v3/klm/event", body: kymaBody, wantCode: http.StatusNotFound},
		{name: "unknown path", path: "/v2/klm/events", body: kymaBody, wantCode: http.StatusNotFound},
		{name: "wrong method", method: http.MethodGet, path: "/v2/klm/event", wantCode: http.StatusMethodNotAllowed, wantHeader: map[string]string{"Allow": "POST"}},
		{name: "runtime matches no Kyma", client: "rt-unknown", path: "/v2/klm/event", body: kymaBody, wantCode: http.StatusForbidden, wantBody: "unknown_runtime"},
		{name: "runtime cannot be checked yet", client: "rt-flaky", path: "/v2/klm/event", body: kymaBody, wantCode: http.StatusServiceUnavailable, wantHeader: map[string]string{"Retry-After": "2"}},
		{name: "certificate without CN", client: "nameless", path: "/v2/klm/event", body: kymaBody, wantCode: http.StatusUnauthorized, wantBody: "no_runtime_id"},
		{name: "manager without consumer", path: "/v2/other/event", body: kymaBody, wantCode: http.StatusServiceUnavailable, wantHeader: map[string]string{"Retry-After": "2"}},
		{name: "health", method: http.MethodGet, path: "/healthz", wantCode: http.StatusOK},
		{name: "ready", method: http.MethodGet, path: "/readyz", wantCode: http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(events.all())
			client, method := tc.client, tc.method
			if client == "" {
				client = "rt-1"
			}
			if method == "" {
				method = http.MethodPost
			}
			a, err := do(t, clients[client], method, base+tc.path, tc.body, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.wantCode, a.code, "body: %s", a.body)
			for k, v := range tc.wantHeader {
				assert.Contains(t, a.header.Get(k), v, "header %s", k)
			}
			assert.Contains(t, a.body, tc.wantBody)
			assert.NotContains(t, a.body, "SECRET-MARKER")
			if !tc.wantEvent {
				time.Sleep(20 * time.Millisecond) // nothing may arrive; a negative check needs a wait
				assert.Len(t, events.all(), before, "no event may be delivered")
				return
			}
			require.Eventually(t, func() bool { return len(events.all()) == before+1 }, 5*time.Second, time.Millisecond)
			ev := events.all()[before]
			assert.Equal(t, "rt-1", ev.RuntimeID)
			assert.Equal(t, manager, ev.Manager)
			assert.Equal(t, strings.Split(tc.path, "/")[1], ev.Contract)
			assert.Equal(t, types.NamespacedName{Namespace: "kyma-system", Name: "default"}, ev.Object)
			assert.Equal(t, schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"}, ev.GVK)
			assert.WithinDuration(t, time.Now(), ev.Received, 5*time.Second)
			assert.Equal(t, tc.wantVersion, ev.OldResourceVersion)
		})
	}

	assert.Equal(t, 1.0, metric(t, f.reg, "listener_verification_failures_total", map[string]string{"reason": "unknown_runtime"}))
	assert.Equal(t, 1.0, metric(t, f.reg, "listener_verification_failures_total", map[string]string{"reason": "no_runtime_id"}))
	assert.Equal(t, 4.0, metric(t, f.reg, "listener_requests_total", map[string]string{"manager": manager, "code": "200"}))
	assert.Equal(t, 1.0, metric(t, f.reg, "listener_requests_total", map[string]string{"manager": "unknown", "code": "404"}))
	assert.Equal(t, 4.0, metric(t, f.reg, "listener_events_delivered_total", map[string]string{"manager": manager}))
	assert.Equal(t, 0.0, metric(t, f.reg, "listener_requests_in_flight", nil))
	assert.Positive(t, metric(t, f.reg, "listener_request_duration_seconds", map[string]string{"manager": manager}))

	// The public runtime-watcher listener's names: every instrumented row
	// (all but the health checks) is a request, all but the 200s errors.
	public := map[string]string{"server_name": "listener"}
	assert.Equal(t, float64(len(tests)-2), metric(t, f.reg, "watcher_listener_requests_total", public))
	assert.Equal(t, float64(len(tests)-2-4), metric(t, f.reg, "watcher_listener_request_errors_total", public))
	assert.Equal(t, 2.0, metric(t, f.reg, "watcher_listener_exceeding_size_limit_requests_total", public))
	assert.Equal(t, 2.0, metric(t, f.reg, "watcher_listener_failed_verification_requests_total", public))
	assert.Equal(t, 0.0, metric(t, f.reg, "watcher_listener_inflight_requests", public))
	assert.Positive(t, metric(t, f.reg, "watcher_listener_request_duration", public))
}

// TestFullQueueAnswers429 fills the queue of a consumer that is stuck and
// checks that further objects are refused with Retry-After while events
// for waiting objects still coalesce, and that all is delivered once the
// consumer moves again.
func TestFullQueueAnswers429(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.QueueCapacity = 2
	cfg.RetryAfter = 1500 * time.Millisecond
	srv := start(t, cfg)
	url := "https://" + srv.addr + "/v2/klm/event"

	release := make(chan struct{})
	delivered := make(chan event.Event, 10)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_ = srv.srv.Consume(ctx, manager, func(ev event.Event) {
			delivered <- ev
			<-release
		})
	}()
	require.Eventually(t, func() bool { return srv.srv.HasConsumer(manager) }, 5*time.Second, time.Millisecond)

	leaf := f.ca.Client("rt-1")
	c := mtlsClient(t, f.ca, &leaf)
	require.Equal(t, http.StatusOK, post(t, c, url, eventBody("stuck")).code)
	<-delivered // the consumer now hangs in this event

	for _, name := range []string{"a", "b"} {
		require.Equal(t, http.StatusOK, post(t, c, url, eventBody(name)).code)
	}
	full := post(t, c, url, eventBody("c"))
	assert.Equal(t, http.StatusTooManyRequests, full.code)
	assert.Equal(t, "2", full.header.Get("Retry-After"), "rounded up to seconds")
	assert.Equal(t, 1.0, metric(t, f.reg, "listener_throttled_total", map[string]string{"manager": manager, "reason": "queue_full"}))
	assert.Equal(t, 0.0, metric(t, f.reg, "listener_throttled_total", map[string]string{"manager": manager, "reason": "runtime_rate"}))
	assert.Equal(t, http.StatusOK, post(t, c, url, eventBody("a")).code, "a waiting object coalesces")
	assert.Equal(t, 2.0, metric(t, f.reg, "listener_queue_depth", map[string]string{"manager": manager}))
	assert.Equal(t, 1.0, metric(t, f.reg, "listener_events_coalesced_total", map[string]string{"manager": manager}))

	close(release)
	var names []string
	for range 2 {
		names = append(names, (<-delivered).Object.Name)
	}
	assert.Equal(t, []string{"a", "b"}, names)
	assert.Equal(t, http.StatusOK, post(t, c, url, eventBody("c")).code, "room again")
}
