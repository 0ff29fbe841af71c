package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// The coordinator labels new Kymas by hash, keeps a pinned one, and when a
// shard leaves the list moves only that shard's Kymas.
func TestCoordinatorAssignsAndRebalances(t *testing.T) {
	writeList(t, "as-a,as-b,as-c")
	j := &journal{slow: map[string]time.Duration{}}
	coord := startShard(t, "as-a", j, true)
	other := startShard(t, "as-b", j, true)
	require.True(t, coord.shard.Coordinator)
	require.False(t, other.shard.Coordinator)

	list := []string{"as-a", "as-b", "as-c"}
	var names []string
	for i := range 12 {
		name := fmt.Sprintf("fleet-%d", i)
		newKyma(t, name, "")
		names = append(names, name)
	}
	pinned := newKyma(t, "pinned", "as-b")
	for _, name := range names {
		want := shard.Assign("runtime-"+name, list)
		require.Eventually(t, func() bool {
			k := getKyma(t, key(name))
			return k.Labels[shared.ShardLabel] == want && k.Annotations[shared.ShardAssignedAnnotation] == want
		}, timeout, tick, "Kyma %s is assigned to %s", name, want)
	}

	before := map[string]string{}
	for _, name := range names {
		before[name] = getKyma(t, key(name)).Labels[shared.ShardLabel]
	}
	writeList(t, "as-a,as-b")
	for _, name := range names {
		want := before[name]
		if want == "as-c" {
			want = shard.Assign("runtime-"+name, []string{"as-a", "as-b"})
		}
		require.Eventually(t, func() bool { return getKyma(t, key(name)).Labels[shared.ShardLabel] == want },
			timeout, tick, "Kyma %s is on %s after as-c left", name, want)
	}
	assert.Equal(t, "as-b", getKyma(t, pinned).Labels[shared.ShardLabel], "a pinned Kyma stays")
	for _, name := range names {
		if s := getKyma(t, key(name)).Labels[shared.ShardLabel]; s == "as-a" || s == "as-b" {
			require.Eventually(t, func() bool { return len(j.of(s, name)) > 0 }, timeout, tick, "shard %s reconciles %s", s, name)
		}
	}
	require.NoError(t, kcp.Client.Delete(context.Background(), configMap()))
}
