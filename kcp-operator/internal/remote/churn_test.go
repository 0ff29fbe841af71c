package remote_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// TestConnectionsFollowTheLiveKymas: an hour of kubeconfig rotations (every
// minute, for each of three Kymas) and of Kymas that come and go leaves
// the cache with about one connection per live Kyma, although no
// connection was idle for IdleTTL.
func TestConnectionsFollowTheLiveKymas(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cache := newCache(t, remote.Options{IdleTTL: 3 * time.Hour, Now: func() time.Time { return now }})
	ctx := t.Context()
	stable := []string{"churn-a", "churn-b", "churn-c"}
	for _, name := range stable {
		createKyma(t, name)
	}
	peak, connections := 0, 0
	for minute := range 60 {
		now = now.Add(time.Minute)
		for _, name := range stable {
			kc, err := env.Kubeconfig(fmt.Sprintf("%s-%d", name, minute), "system:masters")
			require.NoError(t, err)
			putSecret(t, "kc-"+name, name, kc)
			_, err = cache.For(ctx, kymaNamed(name))
			require.NoError(t, err)
			connections++
		}
		short := fmt.Sprintf("churn-short-%d", minute)
		kc, err := env.Kubeconfig(short, "system:masters")
		require.NoError(t, err)
		putSecret(t, "kc-"+short, short, kc)
		k := createKyma(t, short)
		_, err = cache.For(ctx, kymaNamed(short))
		require.NoError(t, err)
		connections++
		require.NoError(t, env.Client.Delete(ctx, k))
		require.Eventually(t, func() bool {
			return kcp.Get(ctx, client.ObjectKeyFromObject(k), &v1beta2.Kyma{}) != nil
		}, 10*time.Second, 10*time.Millisecond, "the cache sees Kyma %s go", short)
		cache.Sweep(ctx)
		peak = max(peak, cache.Len())
	}
	assert.LessOrEqual(t, peak, len(stable), "of %d connections made", connections)
}

// TestConnectionsAreCapped: more kubeconfigs than MaxEntries keep the
// most recently used.
func TestConnectionsAreCapped(t *testing.T) {
	cache := newCache(t, remote.Options{MaxEntries: 2})
	for i := range 4 {
		name := fmt.Sprintf("capped-%d", i)
		kc, err := env.Kubeconfig(name, "system:masters")
		require.NoError(t, err)
		putSecret(t, "kc-"+name, name, kc)
		_, err = cache.For(t.Context(), kymaNamed(name))
		require.NoError(t, err)
	}
	assert.Equal(t, 2, cache.Len())
}

func createKyma(t *testing.T, name string) *v1beta2.Kyma {
	t.Helper()
	k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1beta2.KymaSpec{Channel: "regular"}}
	require.NoError(t, env.Client.Create(t.Context(), k))
	require.Eventually(t, func() bool {
		return kcp.Get(t.Context(), client.ObjectKeyFromObject(k), &v1beta2.Kyma{}) == nil
	}, 10*time.Second, 10*time.Millisecond, "the cache sees Kyma %s", name)
	return k
}
