package options_test

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestModuleSignatureFlags(t *testing.T) {
	base := options.Default()
	base.AgentKCPAddress = "events.kcp.example.com:443"
	assert.Equal(t, "warn", base.ModuleSignaturePolicy, "warn: an upgrade refuses no unsigned module")
	assert.Empty(t, base.ModuleTrustSecret)
	require.NoError(t, base.Validate(), "warn without anchors checks nothing, which is valid")

	tests := []struct {
		args    []string
		wantErr string
	}{
		{args: []string{"--module-signature-policy=enforce", "--module-trust-secret=kcp-system/module-trust"}},
		{args: []string{"--module-signature-policy=off"}},
		{args: []string{"--module-signature-policy=enforce"}, wantErr: "--module-signature-policy=enforce needs --module-trust-secret"},
		{args: []string{"--module-signature-policy=strict"}, wantErr: `--module-signature-policy: "strict" is not a signature policy`},
		{args: []string{"--module-trust-secret=module-trust"}, wantErr: `--module-trust-secret "module-trust": want namespace/name`},
		{args: []string{"--module-trust-secret=a/b/c"}, wantErr: "want namespace/name"},
	}
	for _, tc := range tests {
		o := base
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.Bind(fs)
		require.NoError(t, fs.Parse(tc.args))
		err := o.Validate()
		if tc.wantErr == "" {
			assert.NoError(t, err, tc.args)
		} else {
			assert.ErrorContains(t, err, tc.wantErr, tc.args)
		}
	}
}
