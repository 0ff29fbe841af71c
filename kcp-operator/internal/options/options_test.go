package options_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestDefaultsAreValid(t *testing.T) {
	o := options.Default()
	require.NoError(t, o.Validate())
	assert.False(t, o.AgentInstall(), "without an address the agents could not send events")
	o.AgentKCPAddress = "events.kcp.example.com:443"
	require.NoError(t, o.Validate())
	assert.True(t, o.AgentInstall())
}

func TestFlagsOverrideDefaults(t *testing.T) {
	o := options.Default()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--namespaces=a,b", "--requeue-success=45m", "--feature-gates=SingleCluster=true"}))
	assert.Equal(t, []string{"a", "b"}, o.Namespaces)
	assert.Equal(t, 45*time.Minute, o.RequeueSuccess)
	assert.True(t, o.Gates.Enabled(options.SingleCluster))
}

// TestSettingsFollowTheirFlag: the settings without a flag of their own
// keep their ratio to the flag they follow, as docs/design/settings.md says.
func TestSettingsFollowTheirFlag(t *testing.T) {
	for _, tc := range []struct {
		arg   string
		check func(*testing.T, options.Options)
	}{
		{"--requeue-error=3s", func(t *testing.T, o options.Options) {
			assert.Equal(t, 6*time.Second, o.RequeueWarning)
			assert.Equal(t, 15*time.Second, o.RateLimiterMaxDelay)
		}},
		{"--requeue-busy=2s", func(t *testing.T, o options.Options) { assert.Equal(t, 24*time.Second, o.RequeueBusyMax) }},
		{"--requeue-success=10h", func(t *testing.T, o options.Options) {
			assert.Equal(t, time.Minute, o.RequeueNoPush)
			assert.Equal(t, 11*time.Hour, o.RuntimeIdleTTL)
		}},
		{"--requeue-success=30s", func(t *testing.T, o options.Options) { assert.Equal(t, 30*time.Second, o.RequeueNoPush) }},
		{"--kyma-concurrency=3", func(t *testing.T, o options.Options) { assert.Equal(t, 6, o.ManifestConcurrency) }},
		{"--listener-mode=direct", func(t *testing.T, o options.Options) { assert.False(t, o.WatcherController) }},
		{"--leader-election-lease-duration=30s", func(t *testing.T, o options.Options) {
			assert.Equal(t, 20*time.Second, o.Replicas.RenewDeadline)
			assert.Equal(t, 4*time.Second, o.Replicas.RetryPeriod)
			assert.NoError(t, o.Validate())
		}},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			o := options.Default()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			o.Bind(fs)
			require.NoError(t, fs.Parse([]string{tc.arg}))
			tc.check(t, o)
		})
	}
	d := options.Default()
	assert.True(t, d.WatcherController, "gateway mode, the default, keeps the Watchers' routes")
	assert.Equal(t, 2*d.KymaConcurrency, d.ManifestConcurrency)
}

func TestFeatureGates(t *testing.T) {
	o := options.Default()
	assert.True(t, o.Gates.Enabled(options.ModuleDriftWatch), "Beta: on by default")
	assert.False(t, o.Gates.Enabled(options.Profiling), "Alpha: off by default")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--feature-gates=ModuleDriftWatch=false, Profiling=true"}))
	assert.False(t, o.Gates.Enabled(options.ModuleDriftWatch))
	assert.True(t, o.Gates.Enabled(options.Profiling))
	assert.Equal(t, "ModuleDriftWatch=false,Profiling=true", fs.Lookup("feature-gates").Value.String())

	for arg, want := range map[string]string{
		"--feature-gates=Unknown=true":    `unknown feature gate "Unknown"`,
		"--feature-gates=Profiling":       "want Name=true or Name=false",
		"--feature-gates=Profiling=maybe": "want Name=true or Name=false",
	} {
		o := options.Default()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.Bind(fs)
		assert.ErrorContains(t, fs.Parse([]string{arg}), want, arg)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	o := options.Default()
	o.RequeueBusy = 0
	o.KymaConcurrency = 0
	o.Namespaces = nil
	o.FanOutRate = -1
	o.ListenerMode = "sideways"
	err := o.Validate()
	require.Error(t, err)
	for _, want := range []string{"--requeue-busy must be positive", "--kyma-concurrency must be at least 1",
		"--namespaces", "--fan-out-rate must not be negative", "--listener-mode must be gateway or direct"} {
		assert.True(t, strings.Contains(err.Error(), want), "missing %q in %v", want, err)
	}
}
