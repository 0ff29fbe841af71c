package listener_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/internal/xfcctest"
)

// TestDeniedCertificateIsRefusedInBothModes denies one runtime's
// certificate by serial number while the listener runs: in direct mode
// (real mTLS, on the connection opened before and on a new one) and in
// gateway mode (the certificate in X-Forwarded-Client-Cert) it gets 401
// denied_certificate, counted, while another certificate of the same CA
// and the same runtime's next certificate pass. Taking it off the list
// lets it in again.
func TestDeniedCertificateIsRefusedInBothModes(t *testing.T) {
	f := newFixture(t)
	leaked, other, reissued := f.ca.Client("rt-leaked"), f.ca.Client("rt-other"), f.ca.Client("rt-leaked")
	denied := &denylist.List{}

	directCfg := f.directConfig(t)
	directCfg.DeniedCertificates = denied
	direct := start(t, directCfg)
	consume(t, direct.srv)
	directURL := "https://" + direct.addr + "/v2/klm/event"

	gatewayReg := prometheus.NewRegistry()
	gatewayCfg := f.directConfig(t)
	gatewayCfg.Mode, gatewayCfg.KeyPair, gatewayCfg.Registerer = listener.ModeGateway, nil, gatewayReg
	gatewayCfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	gatewayCfg.DeniedCertificates = denied
	gateway := start(t, gatewayCfg)
	consume(t, gateway.srv)
	viaGateway := func(l pkitest.Leaf) answer {
		t.Helper()
		a, err := do(t, http.DefaultClient, http.MethodPost, "http://"+gateway.addr+"/v2/klm/event", kymaBody,
			http.Header{"X-Forwarded-Client-Cert": {xfcctest.Element(l.Cert)}})
		require.NoError(t, err)
		return a
	}

	open := mtlsClient(t, f.ca, &leaked)
	require.Equal(t, http.StatusOK, post(t, open, directURL, kymaBody).code)
	require.Equal(t, http.StatusOK, viaGateway(leaked).code)

	_, err := denied.SetText([]byte("# rt-leaked, leaked\n" + leaked.Cert.SerialNumber.Text(16) + "\n"))
	require.NoError(t, err)

	for name, a := range map[string]answer{
		"direct, connection opened before": post(t, open, directURL, kymaBody),
		"direct, new connection":           post(t, mtlsClient(t, f.ca, &leaked), directURL, kymaBody),
		"gateway":                          viaGateway(leaked),
	} {
		assert.Equal(t, http.StatusUnauthorized, a.code, name)
		assert.Contains(t, a.body, "denied_certificate", name)
	}
	assert.Equal(t, 2.0, metric(t, f.reg, "listener_verification_failures_total", map[string]string{"reason": "denied_certificate"}))
	assert.Equal(t, 1.0, metric(t, gatewayReg, "listener_verification_failures_total", map[string]string{"reason": "denied_certificate"}))

	for _, l := range []pkitest.Leaf{other, reissued} {
		assert.Equal(t, http.StatusOK, post(t, mtlsClient(t, f.ca, &l), directURL, kymaBody).code, l.Cert.Subject.CommonName)
		assert.Equal(t, http.StatusOK, viaGateway(l).code, l.Cert.Subject.CommonName)
	}

	_, err = denied.SetText(nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, post(t, open, directURL, kymaBody).code, "off the list, in again")
	assert.Equal(t, http.StatusOK, viaGateway(leaked).code)
}
