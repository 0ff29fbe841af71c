package suite

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// shardScenario is the shards, their Kymas and what the scenario recorded
// of the runtimes.
type shardScenario struct {
	s *harness.Shards
	// uids of the module's objects and runtime Kymas, by "namespace/kind/name".
	uids map[string]types.UID
	// deleted is the key of the module object the scenario deleted.
	deleted string
}

func startShards(t *testing.T, names ...string) *shardScenario {
	t.Helper()
	s, err := h.StartShards(t.Context(), shardLease, names...)
	if s != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("logs kept in %s:%s", h.RunDir, s.Logs())
			}
			removeShardKymas(t, s)
			s.Close()
		})
	}
	require.NoError(t, err, "starting the shards")
	return &shardScenario{s: s, uids: map[string]types.UID{}}
}

// removeShardKymas deletes the scenario's Kymas while the shards run, so
// that no agent of theirs stays in the suite's runtimes; best effort.
func removeShardKymas(t *testing.T, s *harness.Shards) {
	ctx := context.WithoutCancel(t.Context())
	for _, k := range s.Kymas {
		kk := &v1beta2.Kyma{}
		kk.Name, kk.Namespace = k.Name, harness.ShardNamespace
		_ = client.IgnoreNotFound(h.KCP.Client.Delete(ctx, kk))
	}
	gone := func() bool {
		var list v1beta2.KymaList
		return h.KCP.Client.List(ctx, &list, client.InNamespace(harness.ShardNamespace)) == nil && len(list.Items) == 0
	}
	deadline := time.Now().Add(time.Minute)
	for !gone() && time.Now().Before(deadline) {
		time.Sleep(tick)
	}
	if !gone() {
		t.Logf("the shard scenario's Kymas were not removed within a minute")
	}
}

func (sc *shardScenario) kyma(t *testing.T, name string) *v1beta2.Kyma {
	t.Helper()
	k := &v1beta2.Kyma{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.ShardNamespace, Name: name}, k))
	return k
}

// kymasOn are the Kymas labelled for shard.
func (sc *shardScenario) kymasOn(t *testing.T, shard string) []*harness.ShardKyma {
	t.Helper()
	var on []*harness.ShardKyma
	for _, k := range sc.s.Kymas {
		if sc.kyma(t, k.Name).Labels[harness.ShardLabel] == shard {
			on = append(on, k)
		}
	}
	return on
}

func kymaNames(kymas []*harness.ShardKyma) []string {
	names := make([]string, len(kymas))
	for i, k := range kymas {
		names[i] = k.Name
	}
	return names
}

func countByShard(shardOf map[string]string) map[string]int {
	n := map[string]int{}
	for _, s := range shardOf {
		n[s]++
	}
	return n
}

// under tells the shard a Kyma is Ready under — labelled for it, claimed
// by it (owner annotation), Ready with its module and agent, its Manifests
// labelled for it, its agent sending to that shard's listener — or why not.
func (sc *shardScenario) under(t *testing.T, k *harness.ShardKyma, allowed []string) (string, string) {
	t.Helper()
	kk := &v1beta2.Kyma{}
	if err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.ShardNamespace, Name: k.Name}, kk); err != nil {
		return "", err.Error()
	}
	label, owner := kk.Labels[harness.ShardLabel], kk.Annotations[harness.ShardOwnerAnnotation]
	switch {
	case !slices.Contains(allowed, label):
		return "", fmt.Sprintf("shard label %q, want one of %v", label, allowed)
	case owner != label:
		return "", fmt.Sprintf("labelled %s, owner annotation %q", label, owner)
	case !ready(kk) || !pushReady(kk):
		return "", fmt.Sprintf("state %q (%s), agent condition true: %v", kk.Status.State, kk.Status.LastOperation.Operation, pushReady(kk))
	case len(kk.Status.Modules) != 1 || kk.Status.Modules[0].State != shared.StateReady:
		return "", fmt.Sprintf("modules %+v", kk.Status.Modules)
	}
	var mfs v1beta2.ManifestList
	if err := h.KCP.Client.List(t.Context(), &mfs, client.InNamespace(harness.ShardNamespace),
		client.MatchingLabels{shared.KymaNameLabel: k.Name}); err != nil {
		return "", err.Error()
	}
	if len(mfs.Items) == 0 {
		return "", "no Manifest"
	}
	for _, mf := range mfs.Items {
		if mf.Labels[harness.ShardLabel] != label {
			return "", fmt.Sprintf("Manifest %s labelled for shard %q", mf.Name, mf.Labels[harness.ShardLabel])
		}
	}
	if addr, want := k.AgentKCPAddr(), sc.s.Shard(label).ListenerAddr; addr != want {
		return "", fmt.Sprintf("its agent sends to %q, shard %s listens on %s", addr, label, want)
	}
	return label, ""
}

func (sc *shardScenario) waitAllUnder(t *testing.T, allowed []string, what string) map[string]string {
	t.Helper()
	return sc.waitUnder(t, sc.s.Kymas, allowed, what)
}

// waitUnder waits until each Kyma is Ready under one of allowed and
// returns the shard of each.
func (sc *shardScenario) waitUnder(t *testing.T, kymas []*harness.ShardKyma, allowed []string, what string) map[string]string {
	t.Helper()
	return sc.waitUnderStreaming(t, kymas, allowed, what, nil)
}

// waitUnderStreaming is waitUnder that also waits until the KCP shows the
// latest runtime edit of each stream.
func (sc *shardScenario) waitUnderStreaming(t *testing.T, kymas []*harness.ShardKyma, allowed []string, what string, streams []*kymaStream) map[string]string {
	t.Helper()
	shardOf := map[string]string{}
	why := map[string]string{}
	begin := time.Now()
	deadline := time.Now().Add(2 * timeout)
	for len(shardOf) < len(kymas) && time.Now().Before(deadline) {
		for _, k := range kymas {
			if _, done := shardOf[k.Name]; done {
				continue
			}
			if s, reason := sc.under(t, k, allowed); s != "" {
				shardOf[k.Name] = s
			} else if old, seen := why[k.Name]; reason != old {
				why[k.Name] = reason
				if seen { // each step of the way after the first look
					t.Logf("%s +%v: %s", k.Name, time.Since(begin).Round(10*time.Millisecond), reason)
				}
			}
		}
		time.Sleep(tick)
	}
	for _, k := range kymas {
		if _, done := shardOf[k.Name]; !done {
			require.FailNowf(t, "timed out", "Kyma %s is not %s (one of %v): %s", k.Name, what, allowed, why[k.Name])
		}
	}
	for _, st := range streams {
		require.Eventually(t, func() bool { return st.lag() == 0 }, timeout, 10*time.Millisecond,
			"%s: the KCP follows the runtime's edits %s", st.k.Name, what)
	}
	return shardOf
}

func moduleObjectKeys(k *harness.ShardKyma) map[string]client.Object {
	return map[string]client.Object{
		k.Namespace + "/Deployment/" + harness.ShardModuleDeployment: &appsv1.Deployment{},
		k.Namespace + "/ConfigMap/" + harness.ShardModuleConfigMap:   &corev1.ConfigMap{},
		k.Namespace + "/Kyma/" + shared.DefaultRuntimeKymaName:       &v1beta2.Kyma{},
	}
}

func objectKey(key string) client.ObjectKey {
	parts := strings.SplitN(key, "/", 3)
	return client.ObjectKey{Namespace: parts[0], Name: parts[2]}
}

// recordModuleObjects notes the UIDs of a Kyma's module objects and runtime Kyma.
func (sc *shardScenario) recordModuleObjects(t *testing.T, k *harness.ShardKyma) {
	t.Helper()
	for key, obj := range moduleObjectKeys(k) {
		require.NoError(t, k.Runtime.Client.Get(t.Context(), objectKey(key), obj), "%s in %s", key, k.Runtime.Name)
		sc.uids[k.Runtime.Name+"/"+key] = obj.GetUID()
	}
}

// assertModuleObjectsKept checks that every recorded object has its UID
// still (the deleted one aside) and returns how many were checked.
func (sc *shardScenario) assertModuleObjectsKept(t *testing.T) int {
	t.Helper()
	n := 0
	for _, k := range sc.s.Kymas {
		for key, obj := range moduleObjectKeys(k) {
			full := k.Runtime.Name + "/" + key
			if full == sc.deleted {
				continue
			}
			if assert.NoError(t, k.Runtime.Client.Get(t.Context(), objectKey(key), obj), full) {
				assert.Equal(t, sc.uids[full], obj.GetUID(), "%s was not recreated", full)
				n++
			}
		}
	}
	return n
}

// deleteModuleConfigMap deletes the module's ConfigMap of a runtime as an admin.
func (sc *shardScenario) deleteModuleConfigMap(t *testing.T, k *harness.ShardKyma) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = k.Namespace, harness.ShardModuleConfigMap
	require.NoError(t, k.Runtime.Client.Delete(t.Context(), cm))
	sc.deleted = k.Runtime.Name + "/" + k.Namespace + "/ConfigMap/" + harness.ShardModuleConfigMap
	t.Logf("deleted ConfigMap %s/%s in %s while its shard is dead", cm.Namespace, cm.Name, k.Runtime.Name)
}

func (sc *shardScenario) eventuallyRepaired(t *testing.T, k *harness.ShardKyma) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	require.Eventually(t, func() bool {
		return k.Runtime.Client.Get(t.Context(), client.ObjectKey{Namespace: k.Namespace, Name: harness.ShardModuleConfigMap}, cm) == nil
	}, timeout, tick, "the new owner of %s repairs the deleted ConfigMap", k.Name)
}

// editAndSee writes value into the runtime Kyma and waits for the KCP.
func (sc *shardScenario) editAndSee(t *testing.T, k *harness.ShardKyma, value string) {
	t.Helper()
	require.NoError(t, writeShardKyma(t.Context(), k, value))
	require.Eventually(t, func() bool {
		kk := sc.kyma(t, k.Name)
		return len(kk.Spec.Modules) > 0 && kk.Spec.Modules[0].ControllerName == value
	}, timeout, 20*time.Millisecond, "%s: the runtime edit %q reaches the KCP", k.Name, value)
}

func (sc *shardScenario) eventuallyKCP(t *testing.T, name, what string, check func(int64) bool) {
	t.Helper()
	require.Eventually(t, func() bool { return check(streamValue(sc.kyma(t, name))) }, timeout, 20*time.Millisecond, "%s: %s", name, what)
}

// writeShardKyma writes value into the first module of a Kyma's runtime
// Kyma, retrying conflicts with the operator's writes.
func writeShardKyma(ctx context.Context, k *harness.ShardKyma, value string) error {
	for {
		kk := &v1beta2.Kyma{}
		err := k.Runtime.Client.Get(ctx, k.RuntimeKymaKey(), kk)
		if err == nil && len(kk.Spec.Modules) > 0 {
			kk.Spec.Modules[0].ControllerName = value
			if err = k.Runtime.Client.Update(ctx, kk); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("writing %q to the runtime Kyma of %s: %w (last: %w)", value, k.Name, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kymaStream is a runtime admin editing a Kyma's runtime Kyma every
// streamEvery, and a reader of the KCP Kyma that tells how far behind it is.
type kymaStream struct {
	k       *harness.ShardKyma
	written atomic.Int64
	seen    atomic.Int64
	cancel  context.CancelFunc
	done    sync.WaitGroup
	once    sync.Once
}

func (sc *shardScenario) startStreams(t *testing.T, kymas []*harness.ShardKyma) []*kymaStream {
	t.Helper()
	var out []*kymaStream
	for _, k := range kymas {
		ctx, cancel := context.WithCancel(t.Context())
		st := &kymaStream{k: k, cancel: cancel}
		st.done.Go(func() {
			for n := int64(1); ctx.Err() == nil; n++ {
				if err := writeShardKyma(ctx, k, "stream-"+strconv.FormatInt(n, 10)); err != nil {
					if ctx.Err() == nil {
						t.Errorf("%v", err)
					}
					return
				}
				st.written.Store(n)
				select {
				case <-ctx.Done():
				case <-time.After(streamEvery):
				}
			}
		})
		st.done.Go(func() {
			for ctx.Err() == nil {
				kk := &v1beta2.Kyma{}
				if h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.ShardNamespace, Name: k.Name}, kk) == nil {
					st.seen.Store(streamValue(kk))
				}
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Millisecond):
				}
			}
		})
		t.Cleanup(func() { st.stop() })
		out = append(out, st)
	}
	return out
}

func (st *kymaStream) lag() int64 { return st.written.Load() - st.seen.Load() }

// stop ends the edits and returns the number of the last one.
func (st *kymaStream) stop() int64 {
	st.once.Do(func() {
		st.cancel()
		st.done.Wait()
	})
	return st.written.Load()
}

// followed waits until the KCP has caught up with a few edits of every stream.
func followed(t *testing.T, streams []*kymaStream, what string) {
	t.Helper()
	for _, st := range streams {
		require.Eventually(t, func() bool { return st.written.Load() >= 3 && st.lag() == 0 }, timeout, 10*time.Millisecond,
			"%s: %s", st.k.Name, what)
	}
}
