package setup_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
)

// TestTheCacheHoldsNoManagedFields: the KCP cache keeps every Kyma,
// Manifest and Kyma Secret; their managed fields, which nothing in the
// operator reads from it, would be a large share of the heap at 10,000
// runtimes.
func TestTheCacheHoldsNoManagedFields(t *testing.T) {
	key := client.ObjectKey{Namespace: ns, Name: kymaName}
	stored := &v1beta2.Kyma{}
	require.NoError(t, kcp.Client.Get(t.Context(), key, stored))
	require.NotEmpty(t, stored.ManagedFields, "the API server records who wrote the Kyma")

	cached := &v1beta2.Kyma{}
	require.NoError(t, op.Manager.GetCache().Get(t.Context(), key, cached))
	assert.Equal(t, stored.Name, cached.Name)
	assert.Empty(t, cached.ManagedFields)
}
