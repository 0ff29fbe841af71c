package shard_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// A Kyma moved by hand while its old shard is in the middle of a long
// reconcile: the new shard starts only after that reconcile ended, and
// the Kyma's Manifests and Secrets follow it.
func TestHandoverWaitsForTheOldShardsReconcile(t *testing.T) {
	j := &journal{slow: map[string]time.Duration{}}
	startShard(t, "ho-a", j, true)
	startShard(t, "ho-b", j, true)
	key := newKyma(t, "moved", "ho-a")
	reconciled(t, key)
	mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "moved-module",
		Labels: map[string]string{shared.KymaNameLabel: "moved", shared.ShardLabel: "ho-a"}},
		Spec: v1beta2.ManifestSpec{Remote: true, Install: v1beta2.InstallInfo{Name: "raw-manifest", Source: runtime.RawExtension{Raw: []byte(`{"repo":"r","name":"n","ref":"sha256:0"}`)}}}}
	require.NoError(t, kcp.Client.Create(context.Background(), mf))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "moved-kubeconfig",
		Labels: map[string]string{shared.KymaNameLabel: "moved"}}}
	require.NoError(t, kcp.Client.Create(context.Background(), secret))

	require.Eventually(t, func() bool { return len(j.of("ho-a", "moved")) > 3 }, timeout, tick, "shard ho-a reconciles its Kyma")
	assert.Equal(t, "ho-a", getKyma(t, key).Annotations[shared.ShardOwnerAnnotation])
	assert.Equal(t, "ho-a", labelOf(t, secret), "the claim labels the Kyma's Secrets for its shard")

	j.setSlow("ho-a", 1500*time.Millisecond)
	require.Eventually(t, func() bool { return len(j.of("ho-a", "moved")) > 5 }, timeout, tick)
	moved := time.Now()
	relabel(t, key, "ho-b")
	require.Eventually(t, func() bool { return len(j.of("ho-b", "moved")) > 0 }, timeout, tick, "shard ho-b takes the Kyma over")

	lastOld := lastEnd(j.of("ho-a", "moved"))
	firstNew := j.of("ho-b", "moved")[0].start
	assert.True(t, lastOld.Before(firstNew), "ho-a ran until %s, ho-b started at %s", lastOld, firstNew)
	assert.True(t, lastOld.After(moved), "the move came in the middle of ho-a's slow reconcile")
	t.Logf("handover after %s (the old shard's reconcile took 1.5s)", firstNew.Sub(moved))
	assert.Equal(t, "ho-b", getKyma(t, key).Annotations[shared.ShardOwnerAnnotation])
	assert.Equal(t, "ho-b", labelOf(t, mf))
	assert.Equal(t, "ho-b", labelOf(t, secret))
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"ho-a", "ho-b"}, claimedBy(t, key))
	}, timeout, tick, "an Event per claim")
}

// A Kyma no operator has reconciled (no finalizer) has no Manifests: its
// claim searches for none, and tells of no takeover. Its Secrets are
// labelled.
func TestANewKymaIsClaimedWithoutASearchForItsManifests(t *testing.T) {
	j := &journal{slow: map[string]time.Duration{}}
	startShard(t, "new-a", j, true)
	key := newKyma(t, "fresh", "new-a")
	// Impossible without a finalizer; here it shows whether the claim looked.
	mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh-module",
		Labels: map[string]string{shared.KymaNameLabel: "fresh", shared.ShardLabel: "elsewhere"}},
		Spec: v1beta2.ManifestSpec{Remote: true, Install: v1beta2.InstallInfo{Name: "raw-manifest", Source: runtime.RawExtension{Raw: []byte(`{"repo":"r","name":"n","ref":"sha256:0"}`)}}}}
	require.NoError(t, kcp.Client.Create(context.Background(), mf))
	t.Cleanup(func() { _ = kcp.Client.Delete(context.Background(), mf) })
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fresh-kubeconfig",
		Labels: map[string]string{shared.KymaNameLabel: "fresh"}}}
	require.NoError(t, kcp.Client.Create(context.Background(), secret))

	require.Eventually(t, func() bool { return len(j.of("new-a", "fresh")) > 0 }, timeout, tick, "shard new-a reconciles the Kyma")
	assert.Equal(t, "new-a", getKyma(t, key).Annotations[shared.ShardOwnerAnnotation])
	assert.Equal(t, "new-a", labelOf(t, secret))
	assert.Equal(t, "elsewhere", labelOf(t, mf), "no Manifest was searched for")
	assert.Never(t, func() bool { return len(claimedBy(t, key)) > 0 }, 2*time.Second, tick, "no Event: nothing was taken over")
}

// claimedBy lists, in order, the shards whose ShardClaimed Events name the Kyma.
func claimedBy(t *testing.T, key types.NamespacedName) []string {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, kcp.Client.List(context.Background(), &list, client.InNamespace(key.Namespace)))
	slices.SortFunc(list.Items, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var shards []string
	for _, e := range list.Items {
		if e.Reason == shard.ReasonClaimed && e.Regarding.Name == key.Name {
			shards = append(shards, strings.Fields(e.Note)[1])
		}
	}
	return shards
}

// A shard killed without giving its Lease up: the new shard claims its
// Kyma only once the Lease has expired, and at once after that.
func TestKilledShardsKymaIsClaimedAfterItsLease(t *testing.T) {
	j := &journal{slow: map[string]time.Duration{}}
	a := startShard(t, "dead-a", j, false)
	startShard(t, "dead-b", j, true)
	key := newKyma(t, "orphan", "dead-a")
	require.Eventually(t, func() bool { return len(j.of("dead-a", "orphan")) > 0 }, timeout, tick)

	a.kill()
	killed := time.Now()
	var l coordinationv1.Lease
	require.NoError(t, kcp.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: leaseOf("dead-a")}, &l))
	expires := l.Spec.RenewTime.Add(lease)
	relabel(t, key, "dead-b")
	require.Eventually(t, func() bool { return len(j.of("dead-b", "orphan")) > 0 }, timeout, tick)

	first := j.of("dead-b", "orphan")[0].start
	assert.True(t, first.After(expires), "claimed at %s, before the Lease expired at %s", first, expires)
	assert.Less(t, first.Sub(expires), 5*time.Second, "claimed long after the Lease expired")
	t.Logf("taken over %s after the kill (Lease %s)", first.Sub(killed), lease)
}

// A shard stopped cleanly gives its Lease up: its Kyma moves at once.
func TestStoppedShardsKymaIsClaimedAtOnce(t *testing.T) {
	j := &journal{slow: map[string]time.Duration{}}
	a := startShard(t, "stop-a", j, true)
	startShard(t, "stop-b", j, true)
	key := newKyma(t, "handed", "stop-a")
	require.Eventually(t, func() bool { return len(j.of("stop-a", "handed")) > 0 }, timeout, tick)
	a.kill()
	stopped := time.Now()
	relabel(t, key, "stop-b")
	require.Eventually(t, func() bool { return len(j.of("stop-b", "handed")) > 0 }, timeout, tick)
	assert.Less(t, j.of("stop-b", "handed")[0].start.Sub(stopped), lease, "waited for a Lease given up")
}

// A shard that was down when its Kyma was moved lets go of it when it
// starts, so that the new shard need not wait for a Lease it renews.
func TestRestartedShardLetsGoOfAKymaMovedMeanwhile(t *testing.T) {
	j := &journal{slow: map[string]time.Duration{}}
	a := startShard(t, "re-a", j, true)
	key := newKyma(t, "while-down", "re-a")
	require.Eventually(t, func() bool { return len(j.of("re-a", "while-down")) > 0 }, timeout, tick)
	a.kill()
	relabel(t, key, "re-b")
	startShard(t, "re-a", j, true)
	b := startShard(t, "re-b", j, true)
	require.Eventually(t, func() bool { return len(j.of("re-b", "while-down")) > 0 }, timeout, tick)
	_ = b
	assert.Equal(t, "re-b", getKyma(t, key).Annotations[shared.ShardOwnerAnnotation])
}

func labelOf(t *testing.T, obj client.Object) string {
	t.Helper()
	require.NoError(t, kcp.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	return obj.GetLabels()[shared.ShardLabel]
}

func lastEnd(runs []run) time.Time {
	var last time.Time
	for _, r := range runs {
		if r.end.After(last) {
			last = r.end
		}
	}
	return last
}
