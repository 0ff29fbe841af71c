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

func TestDefaultsAreValidOnceTheAgentAddressIsGiven(t *testing.T) {
	o := options.Default()
	assert.ErrorContains(t, o.Validate(), "--agent-kcp-address is required", "the address is the one flag without a default")
	o.AgentKCPAddress = "events.kcp.example.com:443"
	require.NoError(t, o.Validate())
}

func TestFlagsOverrideDefaults(t *testing.T) {
	o := options.Default()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--namespaces=a,b", "--requeue-success=45m", "--single-cluster"}))
	assert.Equal(t, []string{"a", "b"}, o.Namespaces)
	assert.Equal(t, 45*time.Minute, o.RequeueSuccess)
	assert.True(t, o.SingleCluster)
}

func TestValidateReportsEveryProblem(t *testing.T) {
	o := options.Default()
	o.RequeueBusy = 0
	o.KymaConcurrency = 0
	o.RequeueJitter = 2
	o.Namespaces = nil
	o.RateLimiterMaxDelay = time.Millisecond
	o.ListenerRuntimeRate = 0
	o.FanOutRate = -1
	o.FanOutRuntimeLatencyTarget = -time.Second
	o.AgentRerenderSpread = -time.Second
	err := o.Validate()
	require.Error(t, err)
	for _, want := range []string{"--requeue-busy must be positive", "--kyma-concurrency must be at least 1",
		"--requeue-jitter", "--namespaces", "--rate-limiter-max-delay", "--listener-runtime-rate",
		"--fan-out-rate must not be negative",
		"--fan-out-runtime-latency-target must not be negative", "--agent-rerender-spread must not be negative, got -1s"} {
		assert.True(t, strings.Contains(err.Error(), want), "missing %q in %v", want, err)
	}
}
