package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// A Kyma moved by hand while its old shard is in the middle of a long
// reconcile: the new shard starts only after that reconcile ended, and
// the Kyma's Manifests and Secrets follow it.
func TestHandoverWaitsForTheOldShardsReconcile(t *testing.T) {
	j := &journal{slow: map[string]time.Duration{}}
	startShard(t, "ho-a", j, true)
	startShard(t, "ho-b", j, true)
	key := newKyma(t, "moved", "ho-a")
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
