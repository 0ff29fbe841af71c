package issuer_test

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

func makeCA(t *testing.T, name string, d time.Duration) *pki.CA {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA(name, key, t0, d)
	require.NoError(t, err)
	return ca
}

func agentRequest(cn string, dns ...string) issuer.Request {
	return issuer.Request{
		Secret:  types.NamespacedName{Namespace: "kcp-system", Name: "kyma-webhook-tls"},
		Purpose: issuer.PurposeAgent, CommonName: cn, DNSNames: dns, IPs: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
}

func issue(t *testing.T, ca *pki.CA, req issuer.Request, usage pki.Usage, notBefore time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{
		CommonName: req.CommonName, DNSNames: req.DNSNames, IPs: req.IPs, Usage: usage, NotBefore: notBefore, Duration: 90 * day,
	}, pki.ECDSAP256)
	require.NoError(t, err)
	return certPEM, keyPEM
}

func TestEvaluate(t *testing.T) {
	oldCA, newCA, foreign := makeCA(t, "old", 365*day), makeCA(t, "new", 365*day), makeCA(t, "foreign", 365*day)
	shortCA := makeCA(t, "short", 40*day)
	st := trust.State{CAs: []*x509.Certificate{oldCA.Cert, newCA.Cert, shortCA.Cert}}
	req := agentRequest("runtime-1", "skr-agent.kyma-system.svc")
	lt := issuer.Lifetime{Duration: 90 * day, RenewBefore: 30 * day}
	both := pki.UsageClient | pki.UsageServer

	good, goodKey := issue(t, newCA, req, both, t0)
	_, otherKey := issue(t, newCA, req, both, t0)
	fromOld, fromOldKey := issue(t, oldCA, req, both, t0)
	fromForeign, fromForeignKey := issue(t, foreign, req, both, t0)
	otherID, otherIDKey := issue(t, newCA, agentRequest("runtime-2", "skr-agent.kyma-system.svc"), both, t0)
	moreNames, moreNamesKey := issue(t, newCA, agentRequest("runtime-1", "skr-agent.kyma-system.svc", "c-1.example.com"), both, t0)
	clientOnly, clientOnlyKey := issue(t, newCA, req, pki.UsageClient, t0)
	capped, cappedKey := issue(t, shortCA, req, both, t0) // cut to the CA's 40 days

	tests := []struct {
		name      string
		cert, key []byte
		target    *x509.Certificate
		now       time.Time
		want      issuer.Reason
		usable    bool
	}{
		{name: "fine", cert: good, key: goodKey, target: newCA.Cert, now: t0.Add(day), usable: true},
		{name: "missing", target: newCA.Cert, now: t0, want: issuer.ReasonMissing},
		{name: "garbage PEM", cert: []byte("garbage"), key: goodKey, target: newCA.Cert, now: t0, want: issuer.ReasonInvalid},
		{name: "key of another certificate", cert: good, key: otherKey, target: newCA.Cert, now: t0, want: issuer.ReasonInvalid},
		{name: "no key", cert: good, target: newCA.Cert, now: t0, want: issuer.ReasonInvalid},
		{name: "runtime ID changed", cert: otherID, key: otherIDKey, target: newCA.Cert, now: t0, want: issuer.ReasonIdentityChanged},
		{name: "DNS names changed", cert: moreNames, key: moreNamesKey, target: newCA.Cert, now: t0, want: issuer.ReasonIdentityChanged},
		{name: "missing server usage", cert: clientOnly, key: clientOnlyKey, target: newCA.Cert, now: t0, want: issuer.ReasonIdentityChanged},
		{name: "CA not in the bundle", cert: fromForeign, key: fromForeignKey, target: newCA.Cert, now: t0, want: issuer.ReasonUntrusted},
		{name: "older than the target CA", cert: fromOld, key: fromOldKey, target: newCA.Cert, now: t0, want: issuer.ReasonCARotated, usable: true},
		{name: "newer than the target CA is as good", cert: good, key: goodKey, target: oldCA.Cert, now: t0, usable: true},
		{name: "in the renewal window", cert: good, key: goodKey, target: newCA.Cert, now: t0.Add(61 * day), want: issuer.ReasonExpiring, usable: true},
		{name: "expired", cert: good, key: goodKey, target: newCA.Cert, now: t0.Add(91 * day), want: issuer.ReasonExpiring},
		{name: "cut to its CA: renewing would not help", cert: capped, key: cappedKey, target: shortCA.Cert, now: t0.Add(30 * day), usable: true},
		{name: "cut to its CA, but the target CA lives longer", cert: capped, key: cappedKey, target: newCA.Cert, now: t0.Add(30 * day), want: issuer.ReasonExpiring, usable: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := issuer.Evaluate(tc.cert, tc.key, req, st, tc.target, tc.now, lt)
			assert.Equal(t, tc.want, v.Reason)
			assert.Equal(t, tc.want == "", v.Fine())
			assert.Equal(t, tc.usable, v.Usable(tc.now))
			if tc.want == issuer.ReasonInvalid {
				assert.Error(t, v.Err, "an invalid certificate comes with its parse error")
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	assert.NoError(t, agentRequest("runtime-1").Validate())
	err := issuer.Request{}.Validate()
	for _, want := range []string{"Secret name", "common name", "purpose"} {
		assert.ErrorContains(t, err, want)
	}
}
