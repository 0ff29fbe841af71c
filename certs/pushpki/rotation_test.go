package pushpki_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/rotation"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/certs/trust"
)

// The first CA lives firstCALife, so that the test sees it expire and leave
// the bundle; the steps before that take a few seconds.
const (
	firstCALife      = 45 * time.Second
	propagationDelay = 4 * time.Second
	gracePeriod      = 10 * time.Second
)

// TestCARotationKeepsMutualTLSWorking walks through a whole CA rotation with
// a server fed from the endpoint Secret (as the listener or gateway) and a
// client fed from the agent's Secret (as the agent), both reloading their
// material after every step, and checks that an open connection keeps
// working and new connections succeed at every step.
func TestCARotationKeepsMutualTLSWorking(t *testing.T) {
	eachBackend(t, testRotation)
}

func testRotation(t *testing.T, backend config.Backend) {
	f := newFixture(t, backend, fixtureOptions{firstCALife: firstCALife, change: func(o *config.Options) {
		o.PropagationDelay, o.GracePeriod = propagationDelay, gracePeriod
	}})
	ctx := t.Context()
	firstAgent := f.ensure(f.newKyma("kyma-1", "runtime-1", "")).Material
	oldCA := bundleCAs(t, firstAgent)[0]
	require.Len(t, bundleCAs(t, firstAgent), 1)

	live := f.serveEndpoint(firstAgent)
	addr, serverKP, serverBundle, agentKP, agentRoots := live.addr, live.serverKP, live.serverBundle, live.agentKP, live.agentRoots
	longLived := agentClient(agentKP, agentRoots)

	body, _, _, err := get(t, longLived, addr, "/")
	require.NoError(t, err)
	require.Equal(t, "runtime-1", body)

	// step reloads both sides from their Secrets, as the listener and the
	// agent do from their mounted files, and checks both kinds of connection.
	step := func(name string) {
		t.Helper()
		_, err := f.endpoint().UpdateReloadable(serverKP, serverBundle)
		require.NoError(t, err, name)
		_, err = f.material("kyma-1-webhook-tls").UpdateReloadable(agentKP, agentRoots)
		require.NoError(t, err, name)
		_, _, reused, err := get(t, longLived, addr, "/")
		require.NoError(t, err, "%s: the open connection broke", name)
		assert.True(t, reused, "%s: the open connection was not reused", name)
		body, _, _, err := get(t, agentClient(agentKP, agentRoots), addr, "/")
		require.NoError(t, err, "%s: a new connection failed", name)
		assert.Equal(t, "runtime-1", body, name)
	}
	// The CAs of cert-manager share their common name: tell them by signature.
	issuedBy := func(secret string, ca *x509.Certificate) bool {
		return leaf(t, f.material(secret)).CheckSignatureFrom(ca) == nil
	}

	// 1. A new CA joins the bundle; nothing is signed by it yet.
	if backend == config.BackendCertManager {
		// The next CA should live long: the short life was for the first only.
		ca := f.certificate(caName)
		ca.Spec.Duration = &metav1.Duration{Duration: 365 * 24 * time.Hour}
		require.NoError(t, kcp.Client.Update(ctx, ca))
	}
	_, err = f.pki.Rotator.Rotate(ctx)
	require.NoError(t, err)
	st := f.reconcile(func(st rotation.Status) bool { return len(st.CAs) == 2 })
	require.Equal(t, trust.PhaseCAAdded, st.Phase)
	newCA := st.CAs[1]
	_, err = f.pki.Rotator.Rotate(ctx)
	assert.True(t, errors.Is(err, rotation.ErrRotationInProgress), "no second rotation while one runs: %v", err)
	assert.Len(t, bundleCAs(t, f.material("kyma-1-webhook-tls")), 2, "the agent got the new bundle")
	assert.Len(t, bundleCAs(t, f.endpoint()), 2, "the endpoint got the new bundle")
	assert.True(t, issuedBy("kyma-1-webhook-tls", oldCA), "clients wait for the bundle to propagate")
	step("new CA added to the bundles")

	// 2. After the propagation delay, the agent certificate comes from the new CA.
	f.reconcile(func(st rotation.Status) bool {
		return st.Phase == trust.PhaseReissuingClients && issuedBy("kyma-1-webhook-tls", newCA)
	})
	assert.True(t, issuedBy(f.opts.EndpointSecret, oldCA), "the server waits for the grace period")
	step("client certificate re-issued")
	assert.NoError(t, agentKP.Leaf().CheckSignatureFrom(newCA), "the agent uses its new certificate")

	// 3. After the grace period, the endpoint's certificate comes from the new CA.
	f.reconcile(func(st rotation.Status) bool {
		return st.Phase == trust.PhaseStable && issuedBy(f.opts.EndpointSecret, newCA)
	})
	step("server certificate switched")
	var seen *x509.Certificate
	probe := tlsreload.ClientConfig(agentKP, agentRoots, "127.0.0.1")
	verify := probe.VerifyConnection
	probe.VerifyConnection = func(cs tls.ConnectionState) error {
		seen = cs.PeerCertificates[0]
		return verify(cs)
	}
	_, _, _, err = get(t, clientFor(probe), addr, "/")
	require.NoError(t, err)
	require.NotNil(t, seen)
	assert.NoError(t, seen.CheckSignatureFrom(newCA), "new connections see the new server certificate")

	// 4. When the old CA expires, it leaves the bundle.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, err := f.pki.Rotator.Reconcile(ctx)
		require.NoError(c, err)
		assert.Len(c, st.CAs, 1)
	}, firstCALife+waitFor, 200*time.Millisecond)
	assert.True(t, bundleCAs(t, f.endpoint())[0].Equal(newCA))
	step("old CA removed")

	oldKP, err := firstAgent.KeyPair()
	require.NoError(t, err)
	_, _, _, err = get(t, agentClient(oldKP, agentRoots), addr, "/")
	require.Error(t, err, "a certificate of the removed CA is rejected")
}

// TestAutomaticRotationWithDefaults runs a rotation on the default timing
// with a moving clock: it starts by itself 90 days before the CA expires,
// moves clients after 5 minutes and the endpoint after an hour, and drops
// the old CA when it expires. No TLS here: certificates are dated by the
// moved clock, so builtin only: cert-manager signs by the real clock
// (TestCARotationKeepsMutualTLSWorking rotates its CA).
func TestAutomaticRotationWithDefaults(t *testing.T) {
	t.Run(string(config.BackendBuiltin), func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, config.BackendBuiltin, fixtureOptions{})
		f.ensure(f.newKyma("kyma-1", "runtime-1", ""))
		oldCA := f.settle().CAs[0]
		issuedBy := func(secret string, ca *x509.Certificate) bool {
			return leaf(t, f.material(secret)).CheckSignatureFrom(ca) == nil
		}

		f.shift(274 * 24 * time.Hour)
		st := f.settle()
		require.Len(t, st.CAs, 1, "91 days before the end is too early")

		f.shift(2 * 24 * time.Hour)
		st = f.reconcile(func(st rotation.Status) bool { return len(st.CAs) == 2 })
		assert.Equal(t, trust.PhaseCAAdded, st.Phase)
		newCA := st.CAs[1]
		assert.True(t, issuedBy("kyma-1-webhook-tls", oldCA))

		f.shift(config.DefaultPropagationDelay)
		f.reconcile(func(st rotation.Status) bool {
			return st.Phase == trust.PhaseReissuingClients && issuedBy("kyma-1-webhook-tls", newCA)
		})
		assert.True(t, issuedBy(f.opts.EndpointSecret, oldCA))

		f.shift(config.DefaultGracePeriod)
		st = f.reconcile(func(st rotation.Status) bool {
			return st.Phase == trust.PhaseStable && issuedBy(f.opts.EndpointSecret, newCA)
		})
		assert.Len(t, st.CAs, 2, "the old CA is trusted until it expires")

		f.shift(90 * 24 * time.Hour)
		st = f.reconcile(func(st rotation.Status) bool { return len(st.CAs) == 1 })
		assert.True(t, st.CAs[0].Equal(newCA))
		assert.Equal(t, trust.PhaseStable, st.Phase, "one rotation, not a second one")
		assert.Len(t, bundleCAs(t, f.material("kyma-1-webhook-tls")), 1, "the agent's bundle lost the old CA too")
	})
}

// TestOneBrokenKymaDoesNotHoldUpTheOthers: a Kyma that yields no
// certificate request is reported, and the Rotator serves the rest.
func TestOneBrokenKymaDoesNotHoldUpTheOthers(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{})
		f.newKyma("kyma-good", "runtime-good", "")
		f.newKyma("kyma-bad", "runtime-bad", "not a domain!")
		f.shift(time.Hour + time.Minute) // the hourly pass over all agents is due

		st, err := f.pki.Rotator.Reconcile(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "kyma-bad")
		assert.True(t, st.AgentsSwept, "the others were served")
		f.reconcile(func(rotation.Status) bool { return true }) // cert-manager may need a second run
		assert.Equal(t, "runtime-good", leaf(t, f.material("kyma-good-webhook-tls")).Subject.CommonName)

		st, err = f.pki.Rotator.Reconcile(t.Context())
		require.NoError(t, err, "the broken Kyma is reported once per pass over all agents, not on every run")
		assert.False(t, st.AgentsSwept)
	})
}
