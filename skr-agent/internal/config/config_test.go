package config_test

import (
	"errors"
	"flag"
	"io"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/config"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func publicAgentEnv() map[string]string {
	return map[string]string{
		"KCP_ADDR": "skr-events.kcp.example.com:443", "KCP_CONTRACT": "v2",
		"CA_CERT": "/tls/ca.crt", "TLS_CERT": "/tls/tls.crt", "TLS_KEY": "/tls/tls.key",
	}
}

func TestLoadFromThePublicAgentsEnvironment(t *testing.T) {
	c, err := config.Load(nil, env(publicAgentEnv()), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "skr-events.kcp.example.com:443", c.KCPAddr)
	assert.Equal(t, "https://skr-events.kcp.example.com:443", c.BaseURL())
	assert.Equal(t, "skr-events.kcp.example.com", c.KCPServerName)
	assert.Equal(t, "v2", c.KCPContract)
	assert.Equal(t, "/tls/ca.crt", c.CACertFile)
	assert.Equal(t, "/tls/tls.crt", c.TLSCertFile)
	assert.Equal(t, "/tls/tls.key", c.TLSKeyFile)
	assert.Equal(t, ":8443", c.WebhookAddr())
	assert.Equal(t, ":2112", c.MetricsAddr())
	assert.Equal(t, 100000, c.QueueSize)
	assert.Equal(t, 4, c.Workers)
	assert.Equal(t, time.Minute, c.BackoffMax)
	assert.Equal(t, "lifecycle-manager", c.ResyncManager)
	assert.Equal(t, 64, c.MaxConcurrentReviews)
	assert.Equal(t, int64(8<<20), c.MaxReviewBytesInFlight)
	assert.Equal(t, 500*time.Millisecond, c.ReviewWait)
}

func TestFlagsWinOverEnvironment(t *testing.T) {
	vars := publicAgentEnv()
	vars["WEBHOOK_PORT"] = "9443"
	vars["METRICS_PORT"] = "9090"
	c, err := config.Load([]string{"--webhook-port=10443", "--kcp-contract", "v3", "--bind-address", "127.0.0.1"}, env(vars), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:10443", c.WebhookAddr())
	assert.Equal(t, "127.0.0.1:9090", c.MetricsAddr())
	assert.Equal(t, "v3", c.KCPContract)
}

func TestKCPAddrForms(t *testing.T) {
	tests := []struct {
		addr, wantAddr, wantServerName string
	}{
		{"kcp.example.com", "kcp.example.com", "kcp.example.com"},
		{"https://kcp.example.com:8443/", "kcp.example.com:8443", "kcp.example.com"},
		{"127.0.0.1:9443", "127.0.0.1:9443", "127.0.0.1"},
		{"[::1]:9443", "[::1]:9443", "::1"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			vars := publicAgentEnv()
			vars["KCP_ADDR"] = tt.addr
			c, err := config.Load(nil, env(vars), io.Discard)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAddr, c.KCPAddr)
			assert.Equal(t, tt.wantServerName, c.KCPServerName)
		})
	}
	vars := publicAgentEnv()
	vars["KCP_ADDR"] = "10.0.0.1:443"
	c, err := config.Load([]string{"--kcp-server-name=gateway.kcp"}, env(vars), io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "gateway.kcp", c.KCPServerName, "an explicit server name wins")
}

func TestInvalidConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		unset  []string
		set    map[string]string
		args   []string
		errors []string // every one must be named
	}{
		{name: "nothing set", unset: []string{"KCP_ADDR", "KCP_CONTRACT", "CA_CERT", "TLS_CERT", "TLS_KEY"},
			errors: []string{"KCP_ADDR", "KCP_CONTRACT", "CA_CERT", "TLS_CERT", "TLS_KEY"}},
		{name: "port not a number", set: map[string]string{"WEBHOOK_PORT": "https"}, errors: []string{"WEBHOOK_PORT"}},
		{name: "port out of range", set: map[string]string{"METRICS_PORT": "70000"}, errors: []string{"METRICS_PORT"}},
		{name: "same ports", set: map[string]string{"METRICS_PORT": "8443"}, errors: []string{"must differ"}},
		{name: "plain http KCP", set: map[string]string{"KCP_ADDR": "http://kcp.example.com"}, errors: []string{"KCP_ADDR"}},
		{name: "KCP with a path", set: map[string]string{"KCP_ADDR": "https://kcp.example.com/v2"}, errors: []string{"KCP_ADDR"}},
		{name: "KCP host with a path", set: map[string]string{"KCP_ADDR": "kcp.example.com/v2"}, errors: []string{"KCP_ADDR"}},
		{name: "KCP port out of range", set: map[string]string{"KCP_ADDR": "kcp.example.com:99999"}, errors: []string{"KCP_ADDR", "1-65535"}},
		{name: "contract with a slash", set: map[string]string{"KCP_CONTRACT": "v2/x"}, errors: []string{"KCP_CONTRACT"}},
		{name: "bad numbers", args: []string{"--queue-size=0", "--workers=0", "--backoff-initial=2m", "--log-level=trace", "--bind-address=localhost"},
			errors: []string{"--queue-size", "--workers", "--backoff-max", "--log-level", "--bind-address"}},
		{name: "review limits", args: []string{"--max-concurrent-reviews=0", "--max-review-bytes=2048", "--max-review-bytes-in-flight=1024", "--review-wait=0s"},
			errors: []string{"--max-concurrent-reviews", "--max-review-bytes-in-flight", "--review-wait"}},
		{name: "review wait beyond the API server's", args: []string{"--review-wait=30s"}, errors: []string{"--review-wait"}},
		{name: "unknown flag", args: []string{"--nope"}, errors: []string{"nope"}},
		{name: "stray argument", args: []string{"extra"}, errors: []string{"extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := publicAgentEnv()
			for _, k := range tt.unset {
				delete(vars, k)
			}
			for k, v := range tt.set {
				vars[k] = v
			}
			_, err := config.Load(tt.args, env(vars), io.Discard)
			require.Error(t, err)
			for _, want := range tt.errors {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	_, err := config.Load([]string{"-h"}, env(nil), io.Discard)
	assert.True(t, errors.Is(err, flag.ErrHelp))
}

// TestReadmeListsEveryFlag keeps the module README's flag table complete.
func TestReadmeListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`--([a-z-]+)`").FindAllStringSubmatch(string(readme), -1) {
		listed[m[1]] = true
	}
	for _, name := range config.FlagNames() {
		assert.True(t, listed[name], "flag --%s is not documented in README.md", name)
	}
}
