package options_test

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestContentPolicyFlags(t *testing.T) {
	o := options.Default()
	assert.Equal(t, contentpolicy.Defaults(), o.ModuleDeniedKinds, "the deny list is on by default")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	assert.Empty(t, o.ModulePrivileged, "no module is privileged by default")
	require.NoError(t, fs.Parse([]string{"--module-denied-kinds=", "--module-privileged=istio,velero"}))
	assert.Empty(t, o.ModuleDeniedKinds, "an empty value turns the deny list off")
	assert.Equal(t, []string{"istio", "velero"}, o.ModulePrivileged)
	require.NoError(t, o.Validate())

	o.ModuleDeniedKinds = []string{"ClusterRoleBinding:root"}
	assert.ErrorContains(t, o.Validate(), "--module-denied-kinds")
}
