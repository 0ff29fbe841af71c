package kyma_test

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

// writes counts the stored changes of one KCP Kyma, seen by a watch:
// every write of the operator is one, so a test can hold it to a budget.
type writes struct {
	mu               sync.Mutex
	metadata, status int
	// first is the state of the first status written.
	first shared.State
	// seen is the resource version of the last change the watch delivered.
	seen uint64
}

// watchKymaWrites watches Kyma name (which need not exist yet) until the
// test ends.
func watchKymaWrites(t *testing.T, name string) *writes {
	t.Helper()
	c, err := client.NewWithWatch(kcp.Config, client.Options{Scheme: kcp.Scheme})
	require.NoError(t, err)
	w, err := c.Watch(t.Context(), &v1beta2.KymaList{}, client.InNamespace(kcpNamespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	counts := &writes{}
	go func() {
		var last *v1beta2.Kyma
		for ev := range w.ResultChan() {
			k, ok := ev.Object.(*v1beta2.Kyma)
			if !ok {
				continue
			}
			if ev.Type == watch.Modified && last != nil {
				counts.add(last, k)
			}
			counts.saw(k)
			last = k
		}
	}()
	return counts
}

func (w *writes) add(old, now *v1beta2.Kyma) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !maps.Equal(old.Labels, now.Labels) || !maps.Equal(old.Annotations, now.Annotations) ||
		!slices.Equal(old.Finalizers, now.Finalizers) {
		w.metadata++
	}
	if !equality.Semantic.DeepEqual(old.Status, now.Status) {
		if w.status == 0 {
			w.first = now.Status.State
		}
		w.status++
	}
}

func (w *writes) saw(k *v1beta2.Kyma) {
	rv, err := strconv.ParseUint(k.ResourceVersion, 10, 64)
	if err != nil {
		return // etcd's versions are numbers; anything else is not counted
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = max(w.seen, rv)
}

// caughtUp waits until the watch has delivered the version of k that the
// test read: a read can return a write before the watch reports it.
func (w *writes) caughtUp(t *testing.T, k *v1beta2.Kyma) {
	t.Helper()
	want, err := strconv.ParseUint(k.ResourceVersion, 10, 64)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.seen >= want
	}, timeout, tick, "the watch reports Kyma %s at version %d", k.Name, want)
}

func (w *writes) firstStatus() shared.State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

func (w *writes) counts() (metadata, status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.metadata, w.status
}

// TestNewKymaTakesOneMetadataWrite: the finalizer, the managed-by label and
// the last-synced spec of a new Kyma are one write, not one each (at 1,000
// Kymas every write per Kyma is 1,000 requests to the KCP).
func TestNewKymaTakesOneMetadataWrite(t *testing.T) {
	counted := watchKymaWrites(t, "frugal")
	newKyma(t, "frugal")
	k := eventuallyKyma(t, "frugal", "Ready", stateIs(shared.StateReady))
	assert.Contains(t, k.Finalizers, shared.KymaFinalizer)
	assert.Equal(t, shared.OperatorName, k.Labels[shared.ManagedByLabel])
	assert.NotEmpty(t, k.Annotations[shared.LastSyncedSpecAnnotation])
	counted.caughtUp(t, k)
	metadata, status := counted.counts()
	assert.Equal(t, 1, metadata, "metadata writes of a new Kyma")
	t.Logf("status writes until Ready: %d", status)
}

// TestOnlyTheKymaControllerWritesKymaStatus: the catalog's condition
// reaches the Kyma through the Kyma controller's status write; a controller
// writing its own condition costs every new Kyma a status write more.
func TestOnlyTheKymaControllerWritesKymaStatus(t *testing.T) {
	counted := watchKymaWrites(t, "one-writer")
	newKyma(t, "one-writer")
	k := eventuallyKyma(t, "one-writer", "Ready", stateIs(shared.StateReady))
	assert.True(t, meta.IsStatusConditionTrue(k.Status.Conditions, v1beta2.ConditionModuleCatalog))
	for _, f := range k.ManagedFields {
		if f.Subresource == "status" {
			assert.Equal(t, kyma.StatusOwner, f.Manager, "writer of the Kyma's status")
		}
	}
	counted.caughtUp(t, k)
	_, status := counted.counts()
	first := counted.firstStatus()
	if first == shared.StateReady {
		assert.Equal(t, 1, status, "status writes of a new Kyma Ready by its first status: Ready only")
	} else {
		assert.Equal(t, 2, status, "status writes: Processing, then Ready")
	}
}

// TestANewKymaShowsProcessingAtOnce: a new Kyma whose module does not
// turn Ready has its first status (Processing, naming the module's
// Manifest) written and mirrored at once, not kept in memory: a restart
// of the operator finds which Manifest is the module's in the status.
func TestANewKymaShowsProcessingAtOnce(t *testing.T) {
	publish(t, module{Name: "tortoise", Version: "1.0.0"})
	releaseMeta(t, "tortoise", map[string]string{"regular": "1.0.0"})
	counted := watchKymaWrites(t, "slow-start")
	newKyma(t, "slow-start", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "tortoise"}} })
	k := eventuallyKyma(t, "slow-start", "Processing", stateIs(shared.StateProcessing))
	require.NotNil(t, moduleStatus(k, "tortoise"))
	assert.Equal(t, "slow-start-tortoise", moduleStatus(k, "tortoise").Manifest.Name, "the status names the module's Manifest")
	counted.caughtUp(t, k)
	first := counted.firstStatus()
	assert.Equal(t, shared.StateProcessing, first)
	require.Eventually(t, func() bool {
		rk, err := runtimeKyma(t, "slow-start")
		return err == nil && rk.Status.State == shared.StateProcessing
	}, timeout, tick, "the runtime Kyma mirrors the status written")
}
