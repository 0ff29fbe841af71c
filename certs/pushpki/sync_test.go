package pushpki_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/runtimesync"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// TestSyncToRuntime puts a Kyma's certificate into a second, real API
// server standing in for the runtime: written once, then not again while
// unchanged, and again after a renewal.
func TestSyncToRuntime(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		ctx := t.Context()
		f := newFixture(t, backend, fixtureOptions{renewable: true})
		res := f.ensure(f.newKyma("kyma-1", "runtime-1", ""))
		key := types.NamespacedName{Namespace: f.opts.RuntimeNamespace, Name: "skr-agent-tls"}
		runtimeSecret := func() *corev1.Secret {
			var s corev1.Secret
			require.NoError(t, runtimeEnv.Client.Get(ctx, key, &s))
			return &s
		}

		wrote, err := f.pki.SyncRuntime(ctx, runtimeEnv.Client, res.Material)
		require.NoError(t, err)
		assert.True(t, wrote)
		first := runtimeSecret()
		synced, err := tlssecret.FromSecret(first)
		require.NoError(t, err)
		assert.True(t, synced.Equal(res.Material))
		assert.Equal(t, "runtime-1", leaf(t, synced).Subject.CommonName)
		assert.True(t, appliedBy(first, runtimesync.FieldOwner), "server-side apply with its own field owner")

		for range 3 {
			again, err := f.pki.EnsureKyma(ctx, f.kyma("kyma-1"))
			require.NoError(t, err)
			wrote, err := f.pki.SyncRuntime(ctx, runtimeEnv.Client, again.Material)
			require.NoError(t, err)
			assert.False(t, wrote, "unchanged material causes no write")
		}
		assert.Equal(t, first.ResourceVersion, runtimeSecret().ResourceVersion)

		renewed := f.renewed("kyma-1", res)
		wrote, err = f.pki.SyncRuntime(ctx, runtimeEnv.Client, renewed.Material)
		require.NoError(t, err)
		assert.True(t, wrote)
		synced, err = tlssecret.FromSecret(runtimeSecret())
		require.NoError(t, err)
		assert.True(t, synced.Equal(renewed.Material))

		assert.NoError(t, testutil.GatherAndCompare(f.reg, strings.NewReader(`
# HELP lifecycle_manager_certificate_runtime_syncs_total Runtime TLS Secret syncs, by whether they wrote (written) or found it current (unchanged).
# TYPE lifecycle_manager_certificate_runtime_syncs_total counter
lifecycle_manager_certificate_runtime_syncs_total{result="unchanged"} 3
lifecycle_manager_certificate_runtime_syncs_total{result="written"} 2
`), "lifecycle_manager_certificate_runtime_syncs_total"))
	})
}

func appliedBy(s *corev1.Secret, manager string) bool {
	for _, f := range s.ManagedFields {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}
