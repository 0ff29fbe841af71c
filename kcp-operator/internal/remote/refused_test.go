package remote_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// A kubeconfig the check refuses is a typed, permanent error for every
// caller of For, naming the Secret; no connection is built from it. The
// same content passes once its feature is allowed.
func TestRefusedKubeconfigIsATypedErrorAndBuildsNoClient(t *testing.T) {
	admin, err := env.Kubeconfig("refused", "system:masters")
	require.NoError(t, err)
	cfg, err := clientcmd.Load(admin)
	require.NoError(t, err)
	for _, c := range cfg.Clusters {
		c.CertificateAuthorityData, c.InsecureSkipTLSVerify = nil, true
	}
	insecure, err := clientcmd.Write(*cfg)
	require.NoError(t, err)
	putSecret(t, "kubeconfig-refused", "refused", insecure)

	cache := newCache(t, remote.Options{})
	_, err = cache.For(t.Context(), kymaNamed("refused"))
	var refused *remote.KubeconfigRefusedError
	require.True(t, errors.As(err, &refused), "got %v", err)
	assert.Equal(t, "default/kubeconfig-refused", refused.Secret)
	assert.Contains(t, err.Error(), "Secret default/kubeconfig-refused")
	assert.Contains(t, err.Error(), "insecure-skip-tls-verify")
	assert.True(t, remote.Refused(err))
	assert.Equal(t, remote.ReasonKubeconfigRefused, remote.ConditionReason(err, "Unreachable"))
	reason, broken := remote.Classify(err)
	assert.False(t, broken, "nothing to evict: %s", reason)
	assert.Zero(t, cache.Len(), "no connection is built from a refused kubeconfig")

	allow, err := kubeconfig.ParseAllow([]string{string(kubeconfig.InsecureSkipTLSVerify)})
	require.NoError(t, err)
	rt, err := newCache(t, remote.Options{Kubeconfig: allow}).For(t.Context(), kymaNamed("refused"))
	require.NoError(t, err, "allowed by the flag")
	assert.NotNil(t, rt)

	assert.Equal(t, "Unreachable", remote.ConditionReason(errors.New("dial tcp: connection refused"), "Unreachable"))
	assert.False(t, remote.Refused(nil))
}
