package listener_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/internal/xfcctest"
)

// TestDirectModeRejectsBadCertificatesInTheHandshake checks that wrong
// client certificates never reach a handler, and that each rejection is
// counted under its reason.
func TestDirectModeRejectsBadCertificatesInTheHandshake(t *testing.T) {
	f := newFixture(t)
	srv := start(t, f.directConfig(t))
	consume(t, srv.srv)
	url := "https://" + srv.addr + "/v2/klm/event"
	untrusted := pkitest.NewCA(t, "untrusted")
	expired := f.ca.IssueAt("rt-old", pki.UsageClient, time.Now().Add(-3*time.Hour))
	serverOnly := f.ca.IssueAt("rt-server", pki.UsageServer, time.Now())
	foreign := untrusted.Client("rt-1")

	tests := []struct {
		name   string
		leaf   *pkitest.Leaf
		reason string
	}{
		{"no client certificate", nil, "no_certificate"},
		{"certificate of a second, untrusted CA", &foreign, "unknown_authority"},
		{"expired certificate", &expired, "expired"},
		{"server certificate", &serverOnly, "wrong_usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := do(t, mtlsClient(t, f.ca, tc.leaf), http.MethodPost, url, kymaBody, nil)
			require.Error(t, err, "the handshake must fail")
			require.Eventually(t, func() bool {
				return metric(t, f.reg, "listener_verification_failures_total", map[string]string{"reason": tc.reason}) == 1
			}, 5*time.Second, 10*time.Millisecond)
		})
	}
	assert.Equal(t, 0.0, metric(t, f.reg, "listener_requests_total", map[string]string{"manager": manager}),
		"no request may reach the handler")
}

// TestCARotationWithoutRestart walks the CA bundle file through a rotation
// while the server runs: the new CA is added (both accepted), then the old
// one removed (rejected on new connections and, from its next request on,
// on a connection that was open before).
func TestCARotationWithoutRestart(t *testing.T) {
	f := newFixture(t)
	newCA := pkitest.NewCA(t, "kcp-ca-2")
	files := pkitest.WriteFiles(t, t.TempDir(), f.server.CertPEM, f.server.KeyPEM, f.ca.PEM())
	cfg := f.directConfig(t)
	cfg.KeyPair, cfg.ClientCAs = nil, nil
	cfg.Files.CertFile, cfg.Files.KeyFile, cfg.Files.CAFile = files.Cert, files.Key, files.CA
	cfg.ReloadInterval = 10 * time.Millisecond
	srv := start(t, cfg)
	events := consume(t, srv.srv)
	url := "https://" + srv.addr + "/v2/klm/event"

	oldLeaf, newLeaf := f.ca.Client("rt-old"), newCA.Client("rt-new")
	oldConn := mtlsClient(t, f.ca, &oldLeaf) // keeps its connection open throughout
	require.Equal(t, http.StatusOK, post(t, oldConn, url, kymaBody).code)
	_, err := do(t, mtlsClient(t, f.ca, &newLeaf), http.MethodPost, url, kymaBody, nil)
	require.Error(t, err, "the new CA is not trusted yet")

	pkitest.WriteFile(t, files.CA, pkitest.Concat(f.ca.PEM(), newCA.PEM()))
	require.Eventually(t, func() bool {
		_, err := do(t, mtlsClient(t, f.ca, &newLeaf), http.MethodPost, url, kymaBody, nil)
		return err == nil
	}, 5*time.Second, 20*time.Millisecond, "the new CA must be trusted after the reload")
	assert.Equal(t, http.StatusOK, post(t, mtlsClient(t, f.ca, &oldLeaf), url, kymaBody).code, "overlap: old CA still trusted")
	assert.Equal(t, http.StatusOK, post(t, oldConn, url, kymaBody).code, "the open connection survives the reload")

	pkitest.WriteFile(t, files.CA, newCA.PEM())
	require.Eventually(t, func() bool {
		_, err := do(t, mtlsClient(t, f.ca, &oldLeaf), http.MethodPost, url, kymaBody, nil)
		return err != nil
	}, 5*time.Second, 20*time.Millisecond, "the old CA must be rejected after its removal")
	a := post(t, oldConn, url, kymaBody)
	assert.Equal(t, http.StatusUnauthorized, a.code, "a connection opened under the old CA loses access too")
	assert.Contains(t, a.body, "unknown_authority")
	assert.Equal(t, http.StatusOK, post(t, mtlsClient(t, f.ca, &newLeaf), url, kymaBody).code)
	assert.Equal(t, 2.0, metric(t, f.reg, "listener_tls_reloads_total", map[string]string{"material": "ca", "result": "success"}))
	runtimes := map[string]bool{}
	for _, ev := range events.all() {
		runtimes[ev.RuntimeID] = true
	}
	assert.Equal(t, map[string]bool{"rt-old": true, "rt-new": true}, runtimes)
}

// TestGatewayMode runs the listener behind a pretend gateway: plain HTTP
// from a trusted loopback address with X-Forwarded-Client-Cert elements
// built from real certificates.
func TestGatewayMode(t *testing.T) {
	f := newFixture(t)
	untrusted := pkitest.NewCA(t, "untrusted")
	rt1, victim, foreign := f.ca.Client("rt-1"), f.ca.Client("rt-victim"), untrusted.Client("rt-1")
	newCfg := func(proxy string) listener.Config {
		cfg := f.directConfig(t)
		cfg.Mode, cfg.KeyPair = listener.ModeGateway, nil
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix(proxy)}
		return cfg
	}
	trustedSrv := start(t, newCfg("127.0.0.0/8"))
	events := consume(t, trustedSrv.srv)
	otherCfg := newCfg("10.0.0.0/8")
	otherCfg.Registerer = prometheus.NewRegistry() // one registry per server
	untrustedSrv := start(t, otherCfg)
	consume(t, untrustedSrv.srv)

	tests := []struct {
		name     string
		addr     string
		xfcc     []string
		wantCode int
		wantID   string
		wantBody string
	}{
		{name: "gateway element", addr: trustedSrv.addr, xfcc: []string{xfcctest.Element(rt1.Cert)}, wantCode: http.StatusOK, wantID: "rt-1"},
		{
			name: "spoofed element from the client before the gateway's", addr: trustedSrv.addr,
			xfcc: []string{xfcctest.Element(victim.Cert) + "," + xfcctest.Element(rt1.Cert)}, wantCode: http.StatusOK, wantID: "rt-1",
		},
		{name: "certificate of an untrusted CA", addr: trustedSrv.addr, xfcc: []string{xfcctest.Element(foreign.Cert)}, wantCode: http.StatusUnauthorized, wantBody: "unknown_authority"},
		{name: "no header", addr: trustedSrv.addr, wantCode: http.StatusUnauthorized, wantBody: "no_certificate"},
		{name: "malformed header", addr: trustedSrv.addr, xfcc: []string{`Cert="x`}, wantCode: http.StatusUnauthorized, wantBody: "malformed_xfcc"},
		{name: "caller is not a trusted proxy", addr: untrustedSrv.addr, xfcc: []string{xfcctest.Element(rt1.Cert)}, wantCode: http.StatusUnauthorized, wantBody: "untrusted_proxy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(events.all())
			a, err := do(t, http.DefaultClient, http.MethodPost, "http://"+tc.addr+"/v2/klm/event", kymaBody,
				http.Header{"X-Forwarded-Client-Cert": tc.xfcc})
			require.NoError(t, err)
			assert.Equal(t, tc.wantCode, a.code, a.body)
			assert.Contains(t, a.body, tc.wantBody)
			if tc.wantID == "" {
				return
			}
			require.Eventually(t, func() bool { return len(events.all()) == before+1 }, 5*time.Second, time.Millisecond)
			assert.Equal(t, tc.wantID, events.all()[before].RuntimeID)
		})
	}
}

// TestHTTP2 checks the answers over HTTP/2, which agents may negotiate: the
// identity of the connection and the body limit work the same.
func TestHTTP2(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.MaxBodyBytes = 512
	srv := start(t, cfg)
	events := consume(t, srv.srv)
	leaf := f.ca.Client("rt-h2")
	c := mtlsClient(t, f.ca, &leaf)
	c.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	url := "https://" + srv.addr + "/v2/klm/event"

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(kymaBody))
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, 2, resp.ProtoMajor)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Eventually(t, func() bool { return len(events.all()) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "rt-h2", events.all()[0].RuntimeID)

	a, err := do(t, c, http.MethodPost, url, iotest.OneByteReader(strings.NewReader(strings.Repeat(" ", 600)+kymaBody)), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.code)
}

// TestGatewayModeOverTLS serves gateway mode with a serving certificate and
// no client certificates: the gateway re-encrypts towards the listener.
func TestGatewayModeOverTLS(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.Mode = listener.ModeGateway
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	srv := start(t, cfg)
	events := consume(t, srv.srv)
	leaf := f.ca.Client("rt-behind-gateway")
	a, err := do(t, mtlsClient(t, f.ca, nil), http.MethodPost, "https://"+srv.addr+"/v2/klm/event", kymaBody,
		http.Header{"X-Forwarded-Client-Cert": {xfcctest.Element(leaf.Cert)}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, a.code, a.body)
	require.Eventually(t, func() bool { return len(events.all()) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, "rt-behind-gateway", events.all()[0].RuntimeID)
}
