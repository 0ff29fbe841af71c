package options_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func TestSKRImagePullSecretName(t *testing.T) {
	o := options.Default()
	n, err := o.SKRImagePullSecretName()
	require.NoError(t, err)
	assert.Zero(t, n, "off by default")

	o.SKRImagePullSecret = "registry-credentials"
	n, err = o.SKRImagePullSecretName()
	require.NoError(t, err)
	assert.Equal(t, types.NamespacedName{Namespace: "kcp-system", Name: "registry-credentials"}, n, "a plain name is in the first watched namespace")

	o.SKRImagePullSecret = "registries/pull"
	n, err = o.SKRImagePullSecretName()
	require.NoError(t, err)
	assert.Equal(t, types.NamespacedName{Namespace: "registries", Name: "pull"}, n)

	o.AgentKCPAddress = "events.kcp.example.com:443"
	for _, bad := range []string{"a/b/c", "/pull", "ns/"} {
		o.SKRImagePullSecret = bad
		assert.ErrorContains(t, o.Validate(), "--skr-image-pull-secret", bad)
	}
}
