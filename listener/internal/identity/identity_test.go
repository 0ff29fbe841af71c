package identity_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener/internal/identity"
	"github.com/lifecycle-manager/listener/internal/xfcc"
	"github.com/lifecycle-manager/listener/internal/xfcctest"
)

type gatewayCase struct {
	name       string
	remoteAddr string
	headers    []string // one X-Forwarded-Client-Cert line each
	element    int
	now        time.Time
	wantID     string
	wantReason string
}

func TestGatewayIdentify(t *testing.T) {
	trusted, untrusted := pkitest.NewCA(t, "trusted"), pkitest.NewCA(t, "untrusted")
	inter := trusted.Intermediate("intermediate")
	rt1, victim := trusted.Client("rt-1"), trusted.Client("rt-victim")
	viaInter := inter.Client("rt-inter")
	foreign := untrusted.Client("rt-1")
	serverOnly := trusted.IssueAt("rt-server", pki.UsageServer, time.Now())
	gw := func(l pkitest.Leaf) string { return xfcctest.Element(l.Cert) }
	pathEscaped := `Hash=1;Cert="` + url.PathEscape(string(rt1.CertPEM)) + `"`
	chainOnly := `Chain="` + xfcctest.EnvoyEscape(string(pkitest.Concat(viaInter.CertPEM, inter.PEM()))) + `"`
	sidecar := `By=spiffe://cluster.local/ns/kcp-system/sa/lm;Hash=abc;Subject="";URI=spiffe://cluster.local/ns/istio-system/sa/gateway`

	tests := []gatewayCase{
		{name: "gateway element", headers: []string{gw(rt1)}, wantID: "rt-1"},
		{name: "client-supplied element before the gateway's is ignored", headers: []string{gw(victim) + "," + gw(rt1)}, wantID: "rt-1"},
		{name: "client-supplied header line before the gateway's", headers: []string{gw(victim), gw(rt1)}, wantID: "rt-1"},
		{name: "gateway element without Cert does not fall back to the client's", headers: []string{gw(victim) + `,By=x;Hash=1;Subject="CN=rt-1"`}, wantReason: identity.ReasonNoCertificate},
		{name: "Cert escaped like url.PathEscape", headers: []string{pathEscaped}, wantID: "rt-1"},
		{name: "chain through an intermediate, Chain only", headers: []string{chainOnly}, wantID: "rt-inter"},
		{name: "Cert and Chain with an intermediate", headers: []string{xfcctest.Element(viaInter.Cert, inter.CA.Cert)}, wantID: "rt-inter"},
		{name: "intermediate missing", headers: []string{gw(viaInter)}, wantReason: identity.ReasonUnknownAuthority},
		{name: "mesh sidecar element after the gateway's, element 2", headers: []string{gw(victim) + "," + gw(rt1) + "," + sidecar}, element: 2, wantID: "rt-1"},
		{name: "element 2 with only one element", headers: []string{gw(rt1)}, element: 2, wantReason: identity.ReasonNoCertificate},
		{name: "IPv4-mapped peer address", remoteAddr: "[::ffff:10.1.2.3]:4000", headers: []string{gw(rt1)}, wantID: "rt-1"},
		{name: "untrusted proxy", remoteAddr: "192.168.1.1:4000", headers: []string{gw(rt1)}, wantReason: identity.ReasonUntrustedProxy},
		{name: "unparsable peer address", remoteAddr: "pipe", headers: []string{gw(rt1)}, wantReason: identity.ReasonUntrustedProxy},
		{name: "no header", wantReason: identity.ReasonNoCertificate},
		{name: "malformed header", headers: []string{`Cert="unterminated`}, wantReason: identity.ReasonMalformedXFCC},
		{name: "second CA not in the bundle", headers: []string{gw(foreign)}, wantReason: identity.ReasonUnknownAuthority},
		{name: "server certificate", headers: []string{gw(serverOnly)}, wantReason: identity.ReasonWrongUsage},
		{name: "expired", headers: []string{gw(rt1)}, now: time.Now().Add(2 * time.Hour), wantReason: identity.ReasonExpired},
		{name: "not PEM", headers: []string{`Cert="hello"`}, wantReason: identity.ReasonMalformedCertificate},
		{name: "bad percent-encoding", headers: []string{`Cert="%zz"`}, wantReason: identity.ReasonMalformedCertificate},
		{name: "no common name", headers: []string{gw(trusted.IssueWithoutCN())}, wantReason: identity.ReasonNoRuntimeID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runGatewayCase(t, trusted, tc)
		})
	}
}

func runGatewayCase(t *testing.T, ca *pkitest.CA, tc gatewayCase) {
	t.Helper()
	now := time.Now
	if !tc.now.IsZero() {
		now = func() time.Time { return tc.now }
	}
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	g, err := identity.NewGateway(identity.NewVerifier(ca.Bundle(), now, 0), proxies, tc.element)
	require.NoError(t, err)
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v2/klm/event", nil)
	r.RemoteAddr = tc.remoteAddr
	if r.RemoteAddr == "" {
		r.RemoteAddr = "10.0.0.7:51234"
	}
	for _, h := range tc.headers {
		r.Header.Add(xfcc.Header, h)
	}
	id, err := g.Identify(r)
	if tc.wantReason != "" {
		require.Error(t, err)
		assert.Equal(t, tc.wantReason, identity.Reason(err), "error: %v", err)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, tc.wantID, id)
}

func TestNewGatewayNeedsProxies(t *testing.T) {
	v := identity.NewVerifier(pkitest.NewCA(t, "ca").Bundle(), nil, 0)
	_, err := identity.NewGateway(v, nil, 1)
	assert.ErrorContains(t, err, "trusted proxy")
	_, err = identity.NewGateway(v, []netip.Prefix{{}}, 1)
	assert.ErrorContains(t, err, "invalid")
}

func TestDirectIdentify(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	d := identity.NewDirect(identity.NewVerifier(ca.Bundle(), nil, 0))
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v2/klm/event", nil)
	r.TLS = nil
	_, err := d.Identify(r)
	assert.Equal(t, identity.ReasonNoCertificate, identity.Reason(err))

	r.TLS = &tls.ConnectionState{}
	_, err = d.Identify(r)
	assert.Equal(t, identity.ReasonNoCertificate, identity.Reason(err))

	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{ca.Client("rt-7").Cert}}
	id, err := d.Identify(r)
	require.NoError(t, err)
	assert.Equal(t, "rt-7", id)

	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{pkitest.NewCA(t, "other").Client("rt-7").Cert}}
	_, err = d.Identify(r)
	assert.Equal(t, identity.ReasonUnknownAuthority, identity.Reason(err))
}

// TestVerifierCacheFollowsTheBundle checks that a cached verdict saves the
// parsing and verification, and that a bundle change re-verifies at once:
// old and new CA both accepted while both are in the bundle, the old one
// rejected as soon as it leaves.
func TestVerifierCacheFollowsTheBundle(t *testing.T) {
	oldCA, newCA := pkitest.NewCA(t, "old"), pkitest.NewCA(t, "new")
	bundle := oldCA.Bundle()
	v := identity.NewVerifier(bundle, nil, 0)
	oldLeaf, newLeaf := oldCA.Client("rt-old"), newCA.Client("rt-new")
	parses := 0
	verify := func(l pkitest.Leaf) (string, error) {
		return v.VerifyDER(l.Cert.Raw, func() ([]*x509.Certificate, error) {
			parses++
			return []*x509.Certificate{l.Cert}, nil
		})
	}

	for range 3 {
		id, err := verify(oldLeaf)
		require.NoError(t, err)
		assert.Equal(t, "rt-old", id)
	}
	assert.Equal(t, 1, parses, "repeated verifications of one certificate come from the cache")
	_, err := verify(newLeaf)
	assert.Equal(t, identity.ReasonUnknownAuthority, identity.Reason(err))
	assert.Equal(t, 1, v.Len(), "failures are not cached")

	_, err = bundle.Set(pkitest.Concat(oldCA.PEM(), newCA.PEM()))
	require.NoError(t, err)
	_, err = verify(oldLeaf)
	require.NoError(t, err, "old CA still trusted during the overlap")
	_, err = verify(newLeaf)
	require.NoError(t, err, "new CA trusted once added")

	_, err = bundle.Set(newCA.PEM())
	require.NoError(t, err)
	_, err = verify(oldLeaf)
	assert.Equal(t, identity.ReasonUnknownAuthority, identity.Reason(err), "old CA removed: the cached verdict must not stand")
	_, err = verify(newLeaf)
	require.NoError(t, err)
}

func TestVerifierCacheIsBounded(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	v := identity.NewVerifier(ca.Bundle(), nil, 2)
	for i := range 5 {
		leaf := ca.Client("rt")
		_, err := v.VerifyDER(leaf.Cert.Raw, func() ([]*x509.Certificate, error) {
			return []*x509.Certificate{leaf.Cert}, nil
		})
		require.NoError(t, err, "leaf %d", i)
		assert.LessOrEqual(t, v.Len(), 2)
	}
}

func TestVerifierExpiresCachedVerdicts(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	leaf := ca.Client("rt-1")
	now := time.Now()
	v := identity.NewVerifier(ca.Bundle(), func() time.Time { return now }, 0)
	verify := func() error {
		_, err := v.VerifyDER(leaf.Cert.Raw, func() ([]*x509.Certificate, error) {
			return []*x509.Certificate{leaf.Cert}, nil
		})
		return err
	}
	require.NoError(t, verify())
	now = leaf.Cert.NotAfter.Add(time.Second)
	assert.Equal(t, identity.ReasonExpired, identity.Reason(verify()), "a cached verdict must not outlive the certificate")
}

// TestDenyListInBothIdentifiers: a certificate on the deny list is refused
// with ReasonDenied by Direct and Gateway, also when its verdict was cached
// before it was denied; one of the same serial from another CA, listed
// with its issuer, is not.
func TestDenyListInBothIdentifiers(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	leaked, fine := ca.Client("rt-leaked"), ca.Client("rt-fine")
	deny := &denylist.List{}
	v := identity.NewVerifier(ca.Bundle(), nil, 0).WithDenyList(deny)
	direct := identity.NewDirect(v)
	gateway, err := identity.NewGateway(v, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, 1)
	require.NoError(t, err)
	identify := map[string]func(pkitest.Leaf) (string, error){
		"direct": func(l pkitest.Leaf) (string, error) {
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v2/klm/event", nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{l.Cert}}
			return direct.Identify(r)
		},
		"gateway": func(l pkitest.Leaf) (string, error) {
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v2/klm/event", nil)
			r.RemoteAddr = "10.0.0.7:51234"
			r.Header.Add(xfcc.Header, xfcctest.Element(l.Cert))
			return gateway.Identify(r)
		},
	}
	for mode, id := range identify {
		_, err := id(leaked)
		require.NoError(t, err, "%s: cached before it is denied", mode)
	}
	otherIssuer := []byte{1, 2, 3}
	deny.Set([]denylist.Entry{{Serial: leaked.Cert.SerialNumber, IssuerKeyID: otherIssuer}})
	for mode, id := range identify {
		_, err := id(leaked)
		assert.NoError(t, err, "%s: listed for another CA only", mode)
	}
	deny.Set([]denylist.Entry{{Serial: leaked.Cert.SerialNumber, IssuerKeyID: leaked.Cert.AuthorityKeyId}})
	for mode, id := range identify {
		got, err := id(leaked)
		assert.Equal(t, identity.ReasonDenied, identity.Reason(err), "%s: %v", mode, err)
		assert.Empty(t, got, mode)
		got, err = id(fine)
		require.NoError(t, err, mode)
		assert.Equal(t, "rt-fine", got, mode)
	}
}
