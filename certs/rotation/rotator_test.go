package rotation

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func caOf(t *testing.T, life time.Duration) *x509.Certificate {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA("ca", key, t0, life)
	require.NoError(t, err)
	return ca.Cert
}

func TestCADue(t *testing.T) {
	const day = 24 * time.Hour
	r := &Rotator{opts: config.Defaults()} // CA renew-before 90 days
	year, short := caOf(t, 365*day), caOf(t, 30*day)
	tests := []struct {
		name string
		ca   *x509.Certificate
		at   time.Duration
		want bool
	}{
		{"young CA", year, 100 * day, false},
		{"one day before the window", year, 274 * day, false},
		{"inside the window", year, 276 * day, true},
		{"expired", year, 400 * day, true},
		// A CA shorter-lived than the window renews in its last third.
		{"short CA early", short, 10 * day, false},
		{"short CA in its last third", short, 21 * day, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, r.caDue(tc.ca, t0.Add(tc.at)))
		})
	}
}

func TestEndpointRequest(t *testing.T) {
	o := config.Defaults()
	_, ok := EndpointRequest(o)
	assert.False(t, ok, "no DNS names: the endpoint certificate is not managed")

	o.EndpointDNSNames = []string{"kcp.example.com", "10.0.0.1", "events.example.com"}
	req, ok := EndpointRequest(o)
	require.True(t, ok)
	require.NoError(t, req.Validate())
	assert.Equal(t, "kcp.example.com", req.CommonName)
	assert.Equal(t, []string{"kcp.example.com", "events.example.com"}, req.DNSNames)
	assert.Equal(t, []net.IP{net.ParseIP("10.0.0.1")}, req.IPs)
	assert.Equal(t, issuer.PurposeEndpoint, req.Purpose)
	assert.Equal(t, config.DefaultEndpointNamespace+"/"+config.DefaultEndpointSecret, req.Secret.String())
}

func TestSweepKeyFollowsBundleClientCAAndDenyList(t *testing.T) {
	a, b := caOf(t, time.Hour), caOf(t, time.Hour)
	one := trust.State{CAs: []*x509.Certificate{a}}
	two := trust.State{CAs: []*x509.Certificate{a, b}}
	assert.Equal(t, sweepKey(one, a, ""), sweepKey(trust.State{CAs: []*x509.Certificate{a}}, a, ""))
	assert.NotEqual(t, sweepKey(one, a, ""), sweepKey(two, a, ""), "a new bundle reaches every agent")
	assert.NotEqual(t, sweepKey(two, a, ""), sweepKey(two, b, ""), "a new client CA re-issues every agent")
	assert.NotEqual(t, sweepKey(two, b, ""), sweepKey(two, b, "v2"), "a new deny list re-issues the denied agents")
}
