package pushpki_test

import (
	"crypto/x509"
	"sync/atomic"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/certmanagertest"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/issuer/builtin"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pushpki"
	"github.com/lifecycle-manager/certs/rotation"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/certs/tlssecret"
)

var backends = []config.Backend{config.BackendBuiltin, config.BackendCertManager}

// eachBackend runs test as a parallel subtest per backend.
func eachBackend(t *testing.T, test func(t *testing.T, backend config.Backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

const caName = "push-ca" // the cert-manager CA issuer, its Certificate and Secret

// waitFor bounds how long a step may take while cert-manager signs.
const waitFor = 30 * time.Second

type fixture struct {
	t       testing.TB
	backend config.Backend
	ns      string
	opts    config.Options
	pki     *pushpki.PKI
	reg     *prometheus.Registry
	offset  atomic.Int64 // added to the real time by the PKI's clock
}

type fixtureOptions struct {
	change func(*config.Options)
	// firstCALife, when set, is the lifetime of the first CA, so that a
	// test sees it expire.
	firstCALife time.Duration
	// noBootstrap leaves the first Reconcile to the test.
	noBootstrap bool
	// renewable gives cert-manager's certificates a life of seconds, so
	// that a test sees them renewed (see renewed).
	renewable bool
}

// Lifetimes of renewable cert-manager certificates: due 30 s after issuance.
const (
	renewableLife        = 90 * time.Second
	renewableRenewBefore = 60 * time.Second
)

func newFixture(t testing.TB, backend config.Backend, fo fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, backend: backend, ns: namespace(t, kcp), reg: prometheus.NewRegistry()}
	f.opts = config.Defaults()
	f.opts.Backend = backend
	f.opts.Namespace, f.opts.EndpointNamespace, f.opts.KymaNamespace = f.ns, f.ns, f.ns
	f.opts.EndpointDNSNames = []string{"localhost", "127.0.0.1"}
	f.opts.RuntimeNamespace = namespace(t, runtimeEnv)
	f.opts.Now = f.now
	if backend == config.BackendCertManager {
		f.opts.IssuerName, f.opts.CASecret = caName, caName
	}
	if fo.firstCALife > 0 {
		f.opts.CARenewBefore = time.Second // no automatic rotation: the test rotates
	}
	if fo.renewable && backend == config.BackendCertManager {
		f.opts.CertDuration, f.opts.CertRenewBefore = renewableLife, renewableRenewBefore
	}
	if fo.change != nil {
		fo.change(&f.opts)
	}
	f.setupCA(fo.firstCALife)
	f.pki = f.newPKI(f.opts, f.reg)
	if !fo.noBootstrap {
		f.settle()
	}
	return f
}

func (f *fixture) now() time.Time { return time.Now().Add(time.Duration(f.offset.Load())) }

// shift moves the PKI's clock forward. cert-manager dates what it signs and
// renews by the real clock, so with cert-manager a shift must stay far from
// any certificate's renewal or expiry (see renewed).
func (f *fixture) shift(d time.Duration) { f.offset.Add(int64(d)) }

// renewed returns the Kyma's certificate once it was renewed as due: builtin
// moves the clock a day into the renewal window of the current certificate;
// cert-manager's (renewable) certificates reach theirs on the real clock.
func (f *fixture) renewed(name string, current issuer.Result) issuer.Result {
	f.t.Helper()
	if f.backend == config.BackendBuiltin {
		due := current.NotAfter.Add(-f.opts.CertRenewBefore + 24*time.Hour)
		f.shift(due.Sub(f.now()))
	}
	var res issuer.Result
	require.EventuallyWithT(f.t, func(c *assert.CollectT) {
		var err error
		res, err = f.pki.EnsureKyma(f.t.Context(), f.kyma(name))
		require.NoError(c, err)
		assert.True(c, res.Issued && !res.Pending, "renewed")
	}, f.opts.CertDuration-f.opts.CertRenewBefore+waitFor, 200*time.Millisecond)
	require.NoError(f.t, res.Material.Validate())
	return res
}

func (f *fixture) newPKI(opts config.Options, reg prometheus.Registerer) *pushpki.PKI {
	f.t.Helper()
	p, err := pushpki.New(kcp.Client, opts, reg, testr.NewWithInterface(f.t, testr.Options{}))
	require.NoError(f.t, err)
	return p
}

// setupCA prepares the CA: for cert-manager the issuer chain, which the
// suite's cert-manager controllers serve; for builtin, with firstCALife, a
// short-lived CA Secret as an existing installation would have it.
func (f *fixture) setupCA(firstCALife time.Duration) {
	t := f.t
	switch f.backend {
	case config.BackendCertManager:
		// cert-manager would renew the CA a third before its end; 30 days
		// leaves the start of a rotation to the rotator, as with builtin.
		life, renewBefore := 365*24*time.Hour, 30*24*time.Hour
		if firstCALife > 0 {
			life, renewBefore = firstCALife, time.Second
		}
		require.NoError(t, certmanagertest.CAIssuer(t.Context(), kcp.Client, f.ns, caName, life, renewBefore))
		t.Cleanup(func() {
			if !certManager.Running() {
				t.Errorf("the cert-manager controllers exited:\n%s", certManager.Tail())
			} else if t.Failed() {
				t.Logf("cert-manager log (end):\n%s", certManager.Tail())
			}
		})
	default:
		if firstCALife == 0 {
			return
		}
		key, err := pki.GenerateKey(pki.ECDSAP256)
		require.NoError(t, err)
		ca, err := pki.NewCA("short-lived CA", key, time.Now(), firstCALife)
		require.NoError(t, err)
		certPEM, keyPEM, err := ca.PEM()
		require.NoError(t, err)
		require.NoError(t, kcp.Client.Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: f.opts.CASecret, Namespace: f.ns},
			Data:       map[string][]byte{builtin.CertKey: certPEM, builtin.KeyKey: keyPEM},
		}))
	}
}

// reconcile runs the Rotator until it is not waiting for cert-manager and
// check holds.
func (f *fixture) reconcile(check func(st rotation.Status) bool) rotation.Status {
	f.t.Helper()
	var st rotation.Status
	require.EventuallyWithT(f.t, func(c *assert.CollectT) {
		var err error
		st, err = f.pki.Rotator.Reconcile(f.t.Context())
		require.NoError(c, err)
		assert.False(c, st.Pending, "waiting for cert-manager")
		assert.True(c, check(st), "condition of the step (phase %s, %d CAs)", st.Phase, len(st.CAs))
	}, waitFor, 50*time.Millisecond)
	return st
}

// settle runs the Rotator until nothing waits.
func (f *fixture) settle() rotation.Status {
	return f.reconcile(func(rotation.Status) bool { return true })
}

// ensure runs EnsureKyma until the certificate is there.
func (f *fixture) ensure(kyma *v1beta2.Kyma) issuer.Result {
	f.t.Helper()
	var res issuer.Result
	require.EventuallyWithT(f.t, func(c *assert.CollectT) {
		var err error
		res, err = f.pki.EnsureKyma(f.t.Context(), f.kyma(kyma.Name))
		require.NoError(c, err)
		assert.False(c, res.Pending, "waiting for cert-manager")
	}, waitFor, 50*time.Millisecond)
	require.NoError(f.t, res.Material.Validate())
	return res
}

func (f *fixture) newKyma(name, runtimeID, domain string) *v1beta2.Kyma {
	f.t.Helper()
	k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: f.ns,
		Labels:      map[string]string{shared.RuntimeIDLabel: runtimeID},
		Annotations: map[string]string{},
	}}
	if domain != "" {
		k.Annotations[shared.SKRDomainAnnotation] = domain
	}
	require.NoError(f.t, kcp.Client.Create(f.t.Context(), k))
	return k
}

func (f *fixture) kyma(name string) *v1beta2.Kyma {
	f.t.Helper()
	var k v1beta2.Kyma
	require.NoError(f.t, kcp.Client.Get(f.t.Context(), types.NamespacedName{Namespace: f.ns, Name: name}, &k))
	return &k
}

func (f *fixture) updateKyma(name string, change func(*v1beta2.Kyma)) {
	f.t.Helper()
	k := f.kyma(name)
	change(k)
	require.NoError(f.t, kcp.Client.Update(f.t.Context(), k))
}

func (f *fixture) secret(name string) *corev1.Secret {
	f.t.Helper()
	var s corev1.Secret
	require.NoError(f.t, kcp.Client.Get(f.t.Context(), types.NamespacedName{Namespace: f.ns, Name: name}, &s))
	return &s
}

func (f *fixture) material(secret string) tlssecret.Material {
	f.t.Helper()
	m, err := tlssecret.FromSecret(f.secret(secret))
	require.NoError(f.t, err)
	return m
}

func (f *fixture) endpoint() tlssecret.Material {
	f.t.Helper()
	m, err := f.pki.EndpointMaterial(f.t.Context())
	require.NoError(f.t, err)
	return m
}

func (f *fixture) certificate(name string) *cmv1.Certificate {
	f.t.Helper()
	var c cmv1.Certificate
	require.NoError(f.t, kcp.Client.Get(f.t.Context(), types.NamespacedName{Namespace: f.ns, Name: name}, &c))
	return &c
}

func leaf(t testing.TB, m tlssecret.Material) *x509.Certificate {
	t.Helper()
	l, err := m.Leaf()
	require.NoError(t, err)
	return l
}

func bundleCAs(t testing.TB, m tlssecret.Material) []*x509.Certificate {
	t.Helper()
	cas, err := pki.ParseCerts(m.CABundle)
	require.NoError(t, err)
	return cas
}

// namespace creates a namespace of its own for a test.
func namespace(t testing.TB, env *testenv.Env) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "certs-"}}
	require.NoError(t, env.Client.Create(t.Context(), ns))
	return ns.Name
}

// liveTLS is a server fed from the endpoint Secret and an agent's key pair
// and roots, as reloadable material that a test updates after a rotation.
type liveTLS struct {
	addr                     string
	serverKP, agentKP        *tlsreload.KeyPair
	serverBundle, agentRoots *tlsreload.Bundle
}

// serveEndpoint serves the endpoint's current certificate and loads agent's.
func (f *fixture) serveEndpoint(agent tlssecret.Material) liveTLS {
	f.t.Helper()
	endpoint := f.endpoint()
	var l liveTLS
	var err error
	l.serverKP, err = endpoint.KeyPair()
	require.NoError(f.t, err)
	l.serverBundle, err = endpoint.Bundle()
	require.NoError(f.t, err)
	l.addr = serve(f.t, tlsreload.ServerConfig(l.serverKP, l.serverBundle))
	l.agentKP, err = agent.KeyPair()
	require.NoError(f.t, err)
	l.agentRoots, err = agent.Bundle()
	require.NoError(f.t, err)
	return l
}
