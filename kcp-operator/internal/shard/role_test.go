package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A shard that becomes the first of the list stops, so that it starts
// again with the coordinator's controllers; the others keep running.
func TestAShardWhoseRoleChangesStops(t *testing.T) {
	writeList(t, "role-a,role-b")
	t.Cleanup(func() { _ = kcp.Client.Delete(context.Background(), configMap()) })
	j := &journal{slow: map[string]time.Duration{}}
	a := startShard(t, "role-a", j, true)
	b := startShard(t, "role-b", j, true)
	c := startShard(t, "role-c", j, true)
	require.True(t, a.shard.Coordinator)
	require.False(t, b.shard.Coordinator)

	writeList(t, "role-b,role-a,role-c")
	for _, p := range []*shardProc{a, b} {
		select {
		case <-p.done:
			require.ErrorContains(t, p.err, "the coordinator of the shard list", p.name)
		case <-time.After(timeout):
			t.Fatalf("shard %s did not stop after its role changed", p.name)
		}
	}
	select {
	case <-c.done:
		t.Fatalf("shard role-c stopped though its role stayed: %v", c.err)
	default:
	}
}
