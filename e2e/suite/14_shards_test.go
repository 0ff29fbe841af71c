package suite

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/harness"
)

// shardLease is the shards' leader election lease: a killed shard's Kymas
// wait that long before another shard may claim them.
const shardLease = 3 * time.Second

func TestShardsSpreadTakeOverAndMoveKymasWithoutUninstallingOrLosingAWrite(t *testing.T) {
	if !h.Local {
		t.Skip("the shards run as processes (local mode)")
	}
	started := time.Now()
	sc := startShards(t, "a", "b", "c")
	t.Logf("three shards up after %v", time.Since(started).Round(100*time.Millisecond))

	t.Run("the coordinator spreads the Kymas over the shards", func(t *testing.T) {
		begin := time.Now()
		require.NoError(t, sc.s.CreateKymas(t.Context(), 3))
		spread := sc.waitAllUnder(t, []string{"a", "b", "c"}, "under the shard it was assigned to")
		t.Logf("%d Kymas on %d runtime API servers, spread %v, all Ready under their shard after %v",
			len(sc.s.Kymas), len(h.Runtimes), countByShard(spread), time.Since(begin).Round(100*time.Millisecond))
		assert.Greater(t, len(countByShard(spread)), 1, "the Kymas are not all on one shard: %v", spread)
		for _, k := range sc.s.Kymas {
			kk := sc.kyma(t, k.Name)
			assert.Equal(t, spread[k.Name], kk.Annotations[harness.ShardAssignedAnnotation],
				"%s: the coordinator assigned the shard it is labelled for", k.Name)
		}
	})
	if t.Failed() {
		return
	}
	if len(sc.kymasOn(t, "c")) == 0 {
		// The coordinator's hash left c empty: give it one by hand, so
		// that its kill moves something (the Kyma is then pinned to c).
		k := sc.s.Kymas[len(sc.s.Kymas)-1]
		t.Logf("the coordinator gave shard c no Kyma; %s is labelled for c by hand", k.Name)
		require.NoError(t, sc.s.Relabel(t.Context(), k.Name, "c"))
		sc.waitUnder(t, []*harness.ShardKyma{k}, []string{"c"}, "under c")
	}

	t.Run("every Kyma is Ready with its module installed, and runtime edits reach the KCP", func(t *testing.T) {
		for _, k := range sc.s.Kymas {
			sc.recordModuleObjects(t, k)
		}
		begin := time.Now()
		for _, k := range sc.s.Kymas {
			sc.editAndSee(t, k, "before-the-kill")
		}
		t.Logf("module objects in place in all %d runtime namespaces; one runtime edit per Kyma reached the KCP within %v",
			len(sc.s.Kymas), time.Since(begin).Round(10*time.Millisecond))
	})
	if t.Failed() {
		return
	}

	t.Run("shard c is killed for good and the list becomes a,b: its Kymas are Ready under a or b", func(t *testing.T) {
		moving := sc.kymasOn(t, "c")
		names := kymaNames(moving)
		streams := sc.startStreams(t, moving)
		followed(t, streams, "before the kill the KCP follows each runtime's edits")
		require.NoError(t, sc.s.Kill("c"))
		killed := time.Now()
		t.Logf("killed shard c (SIGKILL) owning %v", names)
		// A module object deleted in a runtime while its shard is dead: the
		// next owner must repair it.
		sc.deleteModuleConfigMap(t, moving[0])
		require.NoError(t, sc.s.SetList(t.Context(), "a", "b"))
		listed := time.Since(killed)

		moved := sc.waitUnderStreaming(t, moving, []string{"a", "b"}, "under a or b", streams)
		takeover := time.Since(killed)
		t.Logf("takeover: kill → shard list a,b after %v; kill → all of c's Kymas %v Ready under %v, each with its agent sending to its new shard, after %v (lease %v)",
			listed.Round(10*time.Millisecond), names, moved, takeover.Round(10*time.Millisecond), shardLease)
		for _, st := range streams {
			last := st.stop()
			sc.eventuallyKCP(t, st.k.Name, fmt.Sprintf("the last runtime edit (%d) after the takeover", last), func(v int64) bool { return v == last })
			t.Logf("%s: %d runtime edits during the takeover, the KCP holds the last", st.k.Name, last)
		}
		sc.eventuallyRepaired(t, moving[0])
		for _, k := range sc.s.Kymas {
			if !slices.Contains(names, k.Name) {
				assert.Contains(t, []string{"a", "b"}, sc.kyma(t, k.Name).Labels[harness.ShardLabel], "%s stayed where it was", k.Name)
			}
		}
	})
	if t.Failed() {
		return
	}

	t.Run("a Kyma moved from a to b by hand is Ready under b", func(t *testing.T) {
		from, to := "a", "b"
		on := sc.kymasOn(t, from)
		if len(on) == 0 {
			from, to = to, from
			on = sc.kymasOn(t, from)
			t.Logf("no Kyma is on a after the takeover: moving one from b to a instead")
		}
		require.NotEmpty(t, on)
		k := on[0]
		streams := sc.startStreams(t, []*harness.ShardKyma{k})
		followed(t, streams, "before the move the KCP follows the runtime's edits")
		moving := time.Now()
		require.NoError(t, sc.s.Relabel(t.Context(), k.Name, to))
		sc.waitUnderStreaming(t, []*harness.ShardKyma{k}, []string{to}, "under "+to, streams)
		t.Logf("%s relabelled %s → %s: Ready under %s (owner annotation %s) after %v",
			k.Name, from, to, to, sc.kyma(t, k.Name).Annotations[harness.ShardOwnerAnnotation], time.Since(moving).Round(10*time.Millisecond))
		last := streams[0].stop()
		sc.eventuallyKCP(t, k.Name, fmt.Sprintf("the last runtime edit (%d) after the move", last), func(v int64) bool { return v == last })
		t.Logf("%s: %d runtime edits during the move, the KCP holds the last", k.Name, last)
	})

	t.Run("nothing was uninstalled: the module's objects kept their UIDs, no module object was deleted", func(t *testing.T) {
		kept := sc.assertModuleObjectsKept(t)
		deletes := sc.runtimeDeletes(t)
		assert.Empty(t, deletes, "DELETE requests of the operator for module objects, runtime Kymas or runtime namespaces")
		kcpDeletes := sc.kcpDeletes(t)
		assert.Empty(t, kcpDeletes, "DELETE requests of the shards for Kymas or Manifests")
		t.Logf("%d module objects kept their UIDs (one ConfigMap deleted by the test was recreated); "+
			"the runtimes' audit logs show %d DELETEs of module objects by the operator, the KCP's %d of Kymas or Manifests by a shard",
			kept, len(deletes), len(kcpDeletes))
	})

	t.Run("no two shards wrote one Kyma's objects at once (KCP audit log)", func(t *testing.T) {
		runs := sc.ownerRuns(t)
		for _, k := range sc.s.Kymas {
			r := runs[k.Name]
			assert.Empty(t, harness.Overlaps(r), "%s: the shards' writes of the Kyma and its Manifests: %s", k.Name, harness.DescribeRuns(r))
			t.Logf("%s: %s", k.Name, strings.ReplaceAll(harness.DescribeRuns(r), "system:serviceaccount:"+harness.ShardNamespace+":", ""))
		}
	})
	t.Logf("the shard scenario took %v", time.Since(started).Round(time.Second))
}
