package options_test

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestDescriptorRegistryFlagsOfThePublicOperator(t *testing.T) {
	o := options.Default()
	o.AgentKCPAddress = "events.kcp.example.com:443"
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.Bind(fs)
	require.NoError(t, fs.Parse([]string{"--oci-registry-host=http://127.0.0.1:5000", "--oci-registry-cred-secret=oci-creds",
		"--modules-repository-subpath=prod/modules", "--insecure-registries=other:443"}))
	require.NoError(t, o.Validate())
	assert.Equal(t, "kcp-system/oci-creds", o.CredSecretName().String(), "a plain name is in the first watched namespace")
	assert.Equal(t, []string{"other:443", "127.0.0.1:5000"}, o.AllInsecureRegistries(), "http:// is plain HTTP for descriptors and layers")
	assert.Equal(t, "kcp-system/oci-creds", o.LayerPullSecret(), "the layers beside the descriptors need the same login")

	o.DescriptorRegistry = options.DescriptorRegistry{Host: "https://", SubPath: "x"}
	assert.ErrorContains(t, o.Validate(), `--oci-registry-host "https://"`)
	o.DescriptorRegistry = options.DescriptorRegistry{SubPath: "x"}
	assert.ErrorContains(t, o.Validate(), "--modules-repository-subpath needs --oci-registry-host or --oci-registry-cred-secret")
	o.DescriptorRegistry = options.DescriptorRegistry{CredSecret: "a/b/c"}
	assert.ErrorContains(t, o.Validate(), `--oci-registry-cred-secret "a/b/c"`)
}
