package listener_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingAccept is an AcceptRuntime that holds requests of rt-slow until
// released, to keep them in flight.
type blockingAccept struct {
	entered chan struct{}
	release chan struct{}
}

func newBlockingAccept() *blockingAccept {
	return &blockingAccept{entered: make(chan struct{}, 10), release: make(chan struct{})}
}

func (b *blockingAccept) accept(ctx context.Context, runtimeID string) error {
	if runtimeID != "rt-slow" {
		return nil
	}
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return nil
}

// TestGracefulShutdown stops a server with a request in flight: the request
// finishes with 202, requests that arrive meanwhile get 503 (and readyz
// turns 503), and Serve returns without error once the request is done.
func TestGracefulShutdown(t *testing.T) {
	f := newFixture(t)
	hold := newBlockingAccept()
	cfg := f.directConfig(t)
	cfg.AcceptRuntime = hold.accept
	cfg.DrainDelay = 300 * time.Millisecond
	srv := start(t, cfg)
	events := consume(t, srv.srv)
	url := "https://" + srv.addr + "/v2/klm/event"

	slowLeaf, otherLeaf := f.ca.Client("rt-slow"), f.ca.Client("rt-other")
	slow, other := mtlsClient(t, f.ca, &slowLeaf), mtlsClient(t, f.ca, &otherLeaf)
	require.Equal(t, http.StatusOK, post(t, other, url, kymaBody).code, "opens a keep-alive connection")

	inFlight := make(chan answer, 1)
	go func() {
		a, err := do(t, slow, http.MethodPost, url, kymaBody, nil)
		assert.NoError(t, err)
		inFlight <- a
	}()
	<-hold.entered
	assert.Equal(t, 1.0, metric(t, f.reg, "listener_requests_in_flight", nil))

	srv.stop()
	require.Eventually(t, func() bool {
		a, err := do(t, other, http.MethodGet, "https://"+srv.addr+"/readyz", nil, nil)
		return err == nil && a.code == http.StatusServiceUnavailable
	}, 5*time.Second, 5*time.Millisecond, "readyz must report the shutdown")
	a := post(t, other, url, kymaBody)
	assert.Equal(t, http.StatusServiceUnavailable, a.code)
	assert.NotEmpty(t, a.header.Get("Retry-After"))

	close(hold.release)
	select {
	case a := <-inFlight:
		assert.Equal(t, http.StatusOK, a.code, "the request in flight finishes")
	case <-time.After(10 * time.Second):
		t.Fatal("the request in flight did not finish")
	}
	select {
	case <-srv.done:
		require.NoError(t, srv.err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	_, err := do(t, mtlsClient(t, f.ca, &otherLeaf), http.MethodPost, url, kymaBody, nil)
	assert.Error(t, err, "the port is closed after the shutdown")
	runtimes := []string{}
	for _, ev := range events.all() {
		runtimes = append(runtimes, ev.RuntimeID)
	}
	assert.ElementsMatch(t, []string{"rt-other", "rt-slow"}, runtimes)
}

// TestShutdownTimeout stops a server whose request in flight never ends:
// Serve gives up after ShutdownTimeout and says so.
func TestShutdownTimeout(t *testing.T) {
	f := newFixture(t)
	hold := newBlockingAccept()
	defer close(hold.release)
	cfg := f.directConfig(t)
	cfg.AcceptRuntime = hold.accept
	cfg.ShutdownTimeout = 100 * time.Millisecond
	srv := start(t, cfg)
	consume(t, srv.srv)

	slowLeaf := f.ca.Client("rt-slow")
	go func() {
		_, _ = do(t, mtlsClient(t, f.ca, &slowLeaf), http.MethodPost, "https://"+srv.addr+"/v2/klm/event", kymaBody, nil)
	}()
	<-hold.entered
	srv.stop()
	select {
	case <-srv.done:
		assert.ErrorContains(t, srv.err, "did not finish within 100ms")
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func TestServeOnlyOnce(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.Addr = "127.0.0.1:0"
	srv := start(t, cfg)
	leaf := f.ca.Client("rt-1")
	a, err := do(t, mtlsClient(t, f.ca, &leaf), http.MethodGet, "https://"+srv.addr+"/healthz", nil, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, a.code, "serving")
	err = srv.srv.Start(t.Context())
	assert.ErrorContains(t, err, "started before")
	assert.False(t, srv.srv.NeedLeaderElection())
}
