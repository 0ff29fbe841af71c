package pushpki_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pushpki"
)

// TestRunsInAManager wires the PKI as the operator does: the manager's
// cached client, the Rotator added as a Runnable.
func TestRunsInAManager(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.BackendBuiltin, fixtureOptions{noBootstrap: true})
	mgr, err := manager.New(kcp.Config, manager.Options{
		Scheme:                 kcp.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// The manager logs from goroutines that outlive Start; a testr
		// logger would then panic (log after the test ended).
		Logger: logr.Discard(),
	})
	require.NoError(t, err)
	p, err := pushpki.New(mgr.GetClient(), f.opts, prometheus.NewRegistry(), testr.New(t))
	require.NoError(t, err)
	require.NoError(t, p.AddToManager(mgr))
	assert.True(t, p.Rotator.NeedLeaderElection())

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var startErr error
	wg.Go(func() { startErr = mgr.Start(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		assert.NoError(t, startErr, "the manager and the rotator stop cleanly")
	})

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		bundle, err := p.TrustBundle(ctx)
		require.NoError(c, err)
		assert.NotEmpty(c, bundle)
		_, err = p.EndpointMaterial(ctx)
		assert.NoError(c, err)
	}, waitFor, 50*time.Millisecond, "the rotator bootstraps the bundle and the endpoint certificate")

	f.newKyma("kyma-1", "runtime-1", "")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		res, err := p.EnsureKyma(ctx, f.kyma("kyma-1"))
		require.NoError(c, err) // a cache that lags behind a write gives a conflict: the operator retries
		assert.False(c, res.Changed, "settled")
	}, waitFor, 50*time.Millisecond)
	assert.Equal(t, "runtime-1", leaf(t, f.material("kyma-1-webhook-tls")).Subject.CommonName)
}

func TestStartReturnsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, config.BackendBuiltin, fixtureOptions{noBootstrap: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.pki.Rotator.Start(ctx) }()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := f.pki.TrustBundle(t.Context())
		assert.NoError(c, err)
	}, waitFor, 50*time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after the context ended")
	}
}
