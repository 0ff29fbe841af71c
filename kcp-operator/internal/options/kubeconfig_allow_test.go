package options_test

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestRuntimeKubeconfigAllowIsValidated(t *testing.T) {
	o := options.Default()
	o.AgentKCPAddress = "events.kcp.example.com:443"
	assert.Empty(t, o.RuntimeKubeconfigAllow, "inline credentials only by default")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--runtime-kubeconfig-allow=exec,files"}))
	assert.Equal(t, []string{"exec", "files"}, o.RuntimeKubeconfigAllow)
	require.NoError(t, o.Validate())

	o.RuntimeKubeconfigAllow = []string{"exec", "auth-provider"}
	assert.ErrorContains(t, o.Validate(), `--runtime-kubeconfig-allow: unknown kubeconfig feature "auth-provider"`)
}
