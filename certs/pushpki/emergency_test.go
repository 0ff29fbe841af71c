package pushpki_test

import (
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/rotation"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
)

// TestEmergencyRotationDropsTheOldCA: after a CA key leaked, an emergency
// rotation issues a new CA and new agent certificates, and drops the old CA
// as soon as every agent has a certificate of the new one — long before it
// expires (a year here). Then a client certificate the attacker mints with
// the old key is refused by a server fed from the endpoint Secret (as the
// listener in direct mode) and by the bundle (as the listener checks
// X-Forwarded-Client-Cert in gateway mode), and a server certificate minted
// with it is refused by the agent, while the agents' own connections work.
func TestEmergencyRotationDropsTheOldCA(t *testing.T) {
	eachBackend(t, testEmergencyRotation)
}

func testEmergencyRotation(t *testing.T, backend config.Backend) {
	f := newFixture(t, backend, fixtureOptions{change: func(o *config.Options) {
		o.PropagationDelay, o.GracePeriod = propagationDelay, time.Hour // the grace period would not end the trust
	}})
	ctx := t.Context()
	first := f.ensure(f.newKyma("kyma-1", "runtime-1", "")).Material
	f.ensure(f.newKyma("kyma-2", "runtime-2", ""))
	leaked := caOf(t, f.secret(f.opts.CASecret))

	live := f.serveEndpoint(first)
	addr, serverKP, serverBundle, agentKP, agentRoots := live.addr, live.serverKP, live.serverBundle, live.agentKP, live.agentRoots
	reload := func() {
		t.Helper()
		_, err := f.endpoint().UpdateReloadable(serverKP, serverBundle)
		require.NoError(t, err)
		_, err = f.material("kyma-1-webhook-tls").UpdateReloadable(agentKP, agentRoots)
		require.NoError(t, err)
	}
	minted := mintClient(t, leaked, "runtime-1")
	_, _, _, err := get(t, agentClient(minted, agentRoots), addr, "/")
	require.NoError(t, err, "before: the leaked CA's certificates pass, which is the problem")

	_, err = f.pki.Rotator.RotateEmergency(ctx)
	require.NoError(t, err)
	st := f.reconcile(func(st rotation.Status) bool { return len(st.CAs) == 2 })
	assert.Equal(t, rotation.StepPropagating, st.Emergency.Step)
	newCA := st.CAs[1]
	_, err = f.pki.Rotator.RotateEmergency(ctx)
	assert.True(t, errors.Is(err, rotation.ErrRotationInProgress), "one emergency rotation at a time: %v", err)
	reload()
	_, _, _, err = get(t, agentClient(agentKP, agentRoots), addr, "/")
	require.NoError(t, err, "the agents keep working while the new CA propagates")

	st = f.reconcile(func(st rotation.Status) bool { return len(st.CAs) == 1 })
	assert.True(t, st.CAs[0].Equal(newCA))
	assert.False(t, st.Emergency.Active)
	assert.Equal(t, 1.0, emergencies(t, f, "all-agents-moved"), "dropped because every agent moved")
	for _, s := range []string{"kyma-1-webhook-tls", "kyma-2-webhook-tls"} {
		require.NoError(t, leaf(t, f.material(s)).CheckSignatureFrom(newCA), "%s: new certificates first", s)
	}
	f.reconcile(func(rotation.Status) bool {
		return leaf(t, f.endpoint()).CheckSignatureFrom(newCA) == nil && len(bundleCAs(t, f.material("kyma-1-webhook-tls"))) == 1
	})
	assert.Len(t, bundleCAs(t, f.endpoint()), 1, "the gateway's ca.crt lost the old CA")
	reload()
	body, _, _, err := get(t, agentClient(agentKP, agentRoots), addr, "/")
	require.NoError(t, err, "the agent works with its new certificate and the new server certificate")
	assert.Equal(t, "runtime-1", body)

	minted = mintClient(t, leaked, "runtime-1")
	_, _, _, err = get(t, agentClient(minted, agentRoots), addr, "/")
	require.Error(t, err, "direct mode: a certificate minted with the old CA fails the handshake")
	mintedLeaf := minted.Leaf()
	bundle, err := tlsreload.NewBundle(f.secret(f.opts.BundleSecret).Data[tlssecret.CAKey])
	require.NoError(t, err)
	_, err = bundle.Verify([]*x509.Certificate{mintedLeaf}, x509.ExtKeyUsageClientAuth, time.Now())
	require.Error(t, err, "gateway mode: the bundle the listener verifies XFCC with refuses it")

	rogueKP := mintServer(t, leaked)
	rogue := serve(t, tlsreload.ServerConfig(rogueKP, serverBundle))
	_, _, _, err = get(t, agentClient(agentKP, agentRoots), rogue, "/")
	require.Error(t, err, "the agent refuses a server certificate minted with the old CA")
}

// TestEmergencyRotationDropsAtTheDeadline: an agent whose certificate
// cannot be re-issued (its Kyma's request is invalid) holds the old CA
// only until the deadline; meanwhile status and metrics count it.
func TestEmergencyRotationDropsAtTheDeadline(t *testing.T) {
	f := newFixture(t, config.BackendBuiltin, fixtureOptions{})
	f.ensure(f.newKyma("kyma-good", "runtime-good", ""))
	f.ensure(f.newKyma("kyma-stuck", "runtime-stuck", ""))
	f.updateKyma("kyma-stuck", func(k *v1beta2.Kyma) {
		k.Annotations = map[string]string{shared.SKRDomainAnnotation: "not a domain!"}
	})
	ctx := t.Context()

	_, err := f.pki.Rotator.RotateEmergency(ctx)
	require.NoError(t, err)
	f.shift(config.DefaultPropagationDelay)
	var st rotation.Status
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, _ = f.pki.Rotator.Reconcile(ctx) // the stuck Kyma is an error of every full pass
		assert.Equal(c, rotation.StepReissuingAgents, st.Emergency.Step)
		assert.Equal(c, 1, st.Emergency.AgentsBehind)
	}, waitFor, 50*time.Millisecond)
	assert.Equal(t, 2, st.Emergency.AgentsTotal)
	assert.Len(t, st.CAs, 2, "the old CA stays while an agent is behind")
	assert.LessOrEqual(t, st.RequeueAfter, 10*time.Second, "the count is checked again soon")
	assert.Equal(t, 1.0, gauge(t, f, "lifecycle_manager_certificate_emergency_agents_behind"))
	assert.Equal(t, 1.0, gauge(t, f, "lifecycle_manager_certificate_emergency_rotation"))

	f.shift(config.DefaultEmergencyDeadline)
	st, _ = f.pki.Rotator.Reconcile(ctx)
	assert.Len(t, st.CAs, 1, "at the deadline the old CA goes regardless")
	assert.Equal(t, rotation.StepDone, st.Emergency.Step)
	assert.Equal(t, "deadline", st.Emergency.Outcome)
	assert.Equal(t, 1.0, emergencies(t, f, "deadline"))
	assert.Equal(t, 0.0, gauge(t, f, "lifecycle_manager_certificate_emergency_rotation"))
	loaded, err := trust.NewStore(kcp.Client, types.NamespacedName{Namespace: f.ns, Name: f.opts.BundleSecret}).Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded.Emergency.Active(), "the emergency is over in the bundle Secret too")
	st, _ = f.pki.Rotator.Reconcile(ctx)
	assert.Equal(t, trust.PhaseStable, st.Phase)
	assert.False(t, st.Emergency.Active)
}

func caOf(t *testing.T, s *corev1.Secret) *pki.CA {
	t.Helper()
	ca, err := pki.ParseCA(s.Data[tlssecret.CertKey], s.Data[tlssecret.KeyKey])
	require.NoError(t, err)
	return ca
}

func mintClient(t *testing.T, ca *pki.CA, cn string) *tlsreload.KeyPair {
	t.Helper()
	return mint(t, ca, pki.LeafRequest{CommonName: cn, Usage: pki.UsageClient | pki.UsageServer})
}

func mintServer(t *testing.T, ca *pki.CA) *tlsreload.KeyPair {
	t.Helper()
	return mint(t, ca, pki.LeafRequest{CommonName: "localhost", DNSNames: []string{"localhost"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, Usage: pki.UsageServer})
}

func mint(t *testing.T, ca *pki.CA, req pki.LeafRequest) *tlsreload.KeyPair {
	t.Helper()
	req.NotBefore, req.Duration = time.Now().Add(-time.Minute), time.Hour
	certPEM, keyPEM, err := ca.Issue(req, pki.ECDSAP256)
	require.NoError(t, err)
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return kp
}

func gauge(t *testing.T, f *fixture, name string) float64 {
	t.Helper()
	families, err := f.reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() == name && len(fam.GetMetric()) == 1 {
			return fam.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// emergencies is the emergency rotations counted with outcome.
func emergencies(t *testing.T, f *fixture, outcome string) float64 {
	t.Helper()
	families, err := f.reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != "lifecycle_manager_certificate_emergency_rotations_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			if m.GetLabel()[0].GetValue() == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
