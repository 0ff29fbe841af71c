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

func TestTheLeaseDurationSetsTheLeaderElectionTimings(t *testing.T) {
	o := options.Default()
	o.AgentKCPAddress = "events.kcp.example.com:443"
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--leader-election-lease-duration=6s", "--listener-service=kcp-system/lifecycle-manager-events"}))
	o.Replicas.ListenerEndpointIP = "10.1.2.3" // from $POD_IP
	assert.Equal(t, options.Replicas{LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 800 * time.Millisecond,
		ListenerService: "kcp-system/lifecycle-manager-events", ListenerEndpointIP: "10.1.2.3"}, o.Replicas)
	require.NoError(t, o.Validate())
	ns, name := o.Replicas.ListenerServiceKey()
	assert.Equal(t, []string{"kcp-system", "lifecycle-manager-events"}, []string{ns, name})
}

func TestLeaderElectionTimingsMustNest(t *testing.T) {
	for name, r := range map[string]options.Replicas{
		"renew deadline not below the lease": {LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second},
		"retry period too close to renew":    {LeaseDuration: 15 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second},
		"no retry period":                    {LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			o := options.Default()
			o.AgentKCPAddress = "events.kcp.example.com:443"
			o.Replicas = r
			assert.ErrorContains(t, o.Validate(), "want 0 or lease > renew deadline > 1.2 × retry period > 0")
		})
	}
}

func TestTheListenerServiceNeedsTheReplicasIP(t *testing.T) {
	for ip, want := range map[string]string{
		"":          `$POD_IP ""`,
		"0.0.0.0":   `$POD_IP "0.0.0.0"`,
		"pod-a":     `$POD_IP "pod-a"`,
		"fd00::1:2": "",
	} {
		o := options.Default()
		o.AgentKCPAddress = "events.kcp.example.com:443"
		o.Replicas.ListenerService, o.Replicas.ListenerEndpointIP = "kcp-system/events", ip
		if want == "" {
			assert.NoError(t, o.Validate(), ip)
			continue
		}
		assert.ErrorContains(t, o.Validate(), want, ip)
	}
	o := options.Default()
	o.AgentKCPAddress = "events.kcp.example.com:443"
	o.Replicas.ListenerService, o.Replicas.ListenerEndpointIP = "events", "10.0.0.1"
	assert.ErrorContains(t, o.Validate(), `--listener-service "events": want namespace/name`)
}

func TestALeaseOfZeroRunsWithoutLeaderElection(t *testing.T) {
	o := options.Default()
	assert.True(t, o.LeaderElect, "a replica elects by default")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--leader-election-lease-duration=0"}))
	assert.False(t, o.LeaderElect)
	require.NoError(t, o.Validate())
	require.NoError(t, fs.Parse([]string{"--leader-election-lease-duration=-1s"}))
	assert.ErrorContains(t, o.Validate(), "want 0 or lease")
}

func TestShard(t *testing.T) {
	for args, want := range map[string]string{
		"--shard=b":                          "",
		"--shard=B":                          `--shard "B": want a DNS label`,
		"--shard=" + strings.Repeat("s", 41): "at most 40 characters",
		"--shard=b --leader-election-lease-duration=0": "--shard needs leader election",
	} {
		o := options.Default()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.Bind(fs)
		require.NoError(t, fs.Parse(strings.Fields(args)))
		if want == "" {
			assert.NoError(t, o.Validate(), args)
			continue
		}
		assert.ErrorContains(t, o.Validate(), want, args)
	}
	assert.Equal(t, "lifecycle-manager.operator.kyma-project.io", options.LeaseOf(""))
	assert.Equal(t, "lifecycle-manager-b.operator.kyma-project.io", options.LeaseOf("b"))
}
