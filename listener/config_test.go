package listener_test

import (
	"math"
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/listener"
)

func TestNewRejectsBadConfigs(t *testing.T) {
	f := newFixture(t)
	files := pkitest.WriteFiles(t, t.TempDir(), f.server.CertPEM, f.server.KeyPEM, f.ca.PEM())
	tests := []struct {
		name    string
		change  func(*listener.Config)
		wantErr string
	}{
		{"unknown mode", func(c *listener.Config) { c.Mode = "sideways" }, `mode "sideways"`},
		{"no managers", func(c *listener.Config) { c.Managers = nil }, "no managers"},
		{"manager with a slash", func(c *listener.Config) { c.Managers = []string{"a/b"} }, "not a path segment"},
		{"manager twice", func(c *listener.Config) { c.Managers = []string{"a", "a"} }, "registered twice"},
		{"no CA bundle", func(c *listener.Config) { c.ClientCAs = nil }, "no CA bundle"},
		{"no serving certificate in direct mode", func(c *listener.Config) { c.KeyPair = nil }, "serving certificate"},
		{"key pair twice", func(c *listener.Config) { c.Files = tlsreload.Files{CertFile: files.Cert, KeyFile: files.Key} }, "both KeyPair and Files.CertFile"},
		{"bundle twice", func(c *listener.Config) { c.Files = tlsreload.Files{CAFile: files.CA} }, "both ClientCAs and Files.CAFile"},
		{"gateway without proxies", func(c *listener.Config) { c.Mode = listener.ModeGateway }, "TrustedProxies"},
		{"negative limit", func(c *listener.Config) { c.MaxBodyBytes = -1 }, "must not be negative"},
		{"runtime rate without a burst", func(c *listener.Config) {
			c.RuntimeEventRate, c.RuntimeEventBurst = 10, -1
		}, "RuntimeEventBurst -1: a runtime limited to 10 events/s needs a burst of at least 1"},
		{"runtime rate not a number", func(c *listener.Config) { c.RuntimeEventRate = math.NaN() }, "RuntimeEventRate NaN"},
		{"runtime rate infinite", func(c *listener.Config) { c.RuntimeEventRate = math.Inf(1) }, "RuntimeEventRate +Inf"},
		{"missing CA file", func(c *listener.Config) {
			c.ClientCAs, c.Files = nil, tlsreload.Files{CAFile: files.CA + ".gone"}
		}, "no such file"},
		{"metrics registered twice", func(c *listener.Config) {
			reg := prometheus.NewRegistry()
			c.Registerer = reg
			first := *c
			_, err := listener.New(first)
			require.NoError(t, err)
		}, "registering listener metrics"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := f.directConfig(t)
			cfg.Registerer = prometheus.NewRegistry()
			tc.change(&cfg)
			_, err := listener.New(cfg)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestNewAcceptsGatewayWithoutServingCertificate(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.Mode, cfg.KeyPair = listener.ModeGateway, nil
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	srv, err := listener.New(cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{manager, "other"}, srv.Managers())
}
