package config_test

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
)

func TestDefaultsAreValid(t *testing.T) {
	o := config.Defaults()
	require.NoError(t, o.Validate())
	assert.Equal(t, config.BackendBuiltin, o.Backend)
	assert.Equal(t, pki.ECDSAP256, o.KeyAlgorithm)
	assert.Equal(t, 365*24*time.Hour, o.CADuration)
	assert.Equal(t, 90*24*time.Hour, o.CertDuration)
	assert.Equal(t, 30*24*time.Hour, o.CertRenewBefore)
	assert.Equal(t, time.Hour, o.GracePeriod)
	assert.Equal(t, []string{"skr-agent.kyma-system.svc", "skr-agent.kyma-system.svc.cluster.local"}, o.AgentDNSNames())
	assert.Equal(t, "my-kyma-webhook-tls", config.ClientSecretName("my-kyma"))
	assert.Equal(t, o.Namespace, o.CASecretNamespaceOrDefault())
}

func TestBindFlags(t *testing.T) {
	o := config.Defaults()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{
		"--cert-issuer=ClusterIssuer/kcp-ca", "--cert-propagation-delay=10m",
		"--cert-endpoint-dns-names=kcp.example.com, 10.0.0.1 ,", "--cert-ca-secret=cert-manager/kcp-ca",
		"--cert-trusted-ca-fingerprints=" + strings.Repeat("AB:", 31) + "AB",
	}))
	require.NoError(t, o.Validate())
	assert.Equal(t, config.BackendCertManager, o.Backend)
	assert.Equal(t, "ClusterIssuer", o.IssuerKind)
	assert.Equal(t, config.DefaultIssuerGroup, o.IssuerGroup)
	assert.Equal(t, "kcp-ca", o.IssuerName)
	assert.Equal(t, 10*time.Minute, o.PropagationDelay)
	assert.Equal(t, 2*time.Hour, o.GracePeriod, "the grace period follows the propagation delay")
	assert.Equal(t, time.Minute, o.RotationInterval)
	assert.Equal(t, []string{"kcp.example.com", "10.0.0.1"}, o.EndpointDNSNames)
	assert.Equal(t, "cert-manager", o.CASecretNamespaceOrDefault())
	assert.Equal(t, "kcp-ca", o.CASecret)
	assert.Equal(t, []string{strings.Repeat("AB:", 31) + "AB"}, o.TrustedCAFingerprints)

	// Every flag carries the prefix, so that the operator's flags cannot clash.
	fs.VisitAll(func(f *flag.Flag) {
		assert.True(t, strings.HasPrefix(f.Name, config.FlagPrefix), f.Name)
		assert.NotEmpty(t, f.Usage, f.Name)
	})
}

func TestFlagValues(t *testing.T) {
	for _, tc := range []struct {
		name, arg string
		check     func(*testing.T, config.Options)
		err       string
	}{
		{"issuer by name is an Issuer", "--cert-issuer=ca", func(t *testing.T, o config.Options) {
			assert.Equal(t, config.BackendCertManager, o.Backend)
			assert.Equal(t, "Issuer", o.IssuerKind)
		}, ""},
		{"issuer of another group", "--cert-issuer=awspca.cert-manager.io/AWSPCAClusterIssuer/pca", func(t *testing.T, o config.Options) {
			assert.Equal(t, "awspca.cert-manager.io", o.IssuerGroup)
			assert.Equal(t, "AWSPCAClusterIssuer", o.IssuerKind)
			assert.Equal(t, "pca", o.IssuerName)
		}, ""},
		{"no issuer is the built-in CA", "--cert-issuer=", func(t *testing.T, o config.Options) {
			assert.Equal(t, config.BackendBuiltin, o.Backend)
		}, ""},
		{"an issuer with an empty part", "--cert-issuer=Issuer/", nil, "want [[GROUP/]KIND/]NAME"},
		{"an issuer with too many parts", "--cert-issuer=a/b/c/d", nil, "want [[GROUP/]KIND/]NAME"},
		{"a CA Secret by name stays in --cert-namespace", "--cert-ca-secret=mine", func(t *testing.T, o config.Options) {
			assert.Equal(t, "mine", o.CASecret)
			assert.Equal(t, o.Namespace, o.CASecretNamespaceOrDefault())
		}, ""},
		{"a CA Secret without a name", "--cert-ca-secret=ns/", nil, "want NAME or NAMESPACE/NAME"},
		{"a short propagation delay checks every second", "--cert-propagation-delay=2s", func(t *testing.T, o config.Options) {
			assert.Equal(t, 24*time.Second, o.GracePeriod)
			assert.Equal(t, time.Second, o.RotationInterval)
		}, ""},
		{"a propagation delay that is no duration", "--cert-propagation-delay=soon", nil, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := config.Defaults()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			err := fs.Parse([]string{tc.arg})
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			tc.check(t, o)
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name   string
		change func(*config.Options)
		want   []string
	}{
		{"unknown backend", func(o *config.Options) { o.Backend = "vault" }, []string{`backend "vault"`}},
		{"cert-manager without issuer", func(o *config.Options) { o.Backend = config.BackendCertManager }, []string{"issuer name"}},
		{"wrong issuer kind", func(o *config.Options) {
			o.Backend, o.IssuerName, o.IssuerKind = config.BackendCertManager, "x", "Vault"
		}, []string{`issuer kind "Vault"`}},
		{"renew before the whole life", func(o *config.Options) { o.CertRenewBefore = o.CertDuration }, []string{"certificate renew-before"}},
		{"CA renew before the whole life", func(o *config.Options) { o.CARenewBefore = 2 * o.CADuration }, []string{"CA renew-before"}},
		{"grace shorter than propagation", func(o *config.Options) { o.GracePeriod = time.Minute }, []string{"grace period"}},
		{"empty names", func(o *config.Options) { o.Namespace, o.RuntimeSecret = "", "" }, []string{"namespace must not", "runtime secret must not"}},
		{"a trusted CA fingerprint that is no SHA-256", func(o *config.Options) {
			o.TrustedCAFingerprints = []string{"AB:CD", strings.Repeat("ab", 32)}
		}, []string{`trusted CA fingerprint "AB:CD"`}},
		{"several at once", func(o *config.Options) { o.RotationInterval, o.KeyAlgorithm = 0, "dsa" }, []string{"rotation interval", "dsa"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := config.Defaults()
			tc.change(&o)
			err := o.Validate()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestClock(t *testing.T) {
	o := config.Defaults()
	assert.WithinDuration(t, time.Now(), o.Clock(), time.Minute)
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return fixed }
	assert.Equal(t, fixed, o.Clock())
}

// TestREADMEListsEveryFlag keeps the flag table of certs/README.md complete.
func TestREADMEListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	o := config.Defaults()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		assert.Contains(t, string(readme), "| `--"+f.Name+"` |", "README.md must document --%s", f.Name)
	})
}
