package options_test

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestRenderLimitFlags(t *testing.T) {
	o := options.Default()
	o.AgentKCPAddress = "events.kcp.example.com:443"
	assert.Equal(t, contentpolicy.Defaults(), o.ModuleDeniedKinds, "the deny list is on by default")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	assert.Empty(t, o.ModulePrivileged, "no module is privileged by default")
	require.NoError(t, fs.Parse([]string{"--render-timeout=5s", "--render-max-mb=4", "--render-max-objects=100", "--module-denied-kinds=", "--module-privileged=istio,velero"}))
	assert.Equal(t, 5*time.Second, o.RenderTimeout)
	assert.Equal(t, int64(4), o.RenderMaxMB)
	assert.Equal(t, 100, o.RenderMaxObjects)
	assert.Empty(t, o.ModuleDeniedKinds, "an empty value turns the deny list off")
	assert.Equal(t, []string{"istio", "velero"}, o.ModulePrivileged)
	require.NoError(t, o.Validate())

	o.ModuleDeniedKinds = []string{"ClusterRoleBinding:root"}
	o.RenderMaxObjects = 0
	o.RenderTimeout = 0
	err := o.Validate()
	assert.ErrorContains(t, err, "--module-denied-kinds")
	assert.ErrorContains(t, err, "--render-max-objects must be at least 1")
	assert.ErrorContains(t, err, "--render-timeout must be positive")
}
