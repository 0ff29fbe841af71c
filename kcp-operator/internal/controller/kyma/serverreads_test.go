package kyma_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// readLog records the requests a runtime serves, by path: of a GET the
// resourceVersion it asked for ("" for a quorum read), of any other request
// its method.
type readLog struct {
	mu     sync.Mutex
	gets   map[string][]string
	writes map[string][]string
	inner  http.RoundTripper
}

func (l *readLog) wrap(next http.RoundTripper) http.RoundTripper {
	l.inner = next
	return l
}

func (l *readLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	if l.gets == nil {
		l.gets, l.writes = map[string][]string{}, map[string][]string{}
	}
	if r.Method == http.MethodGet {
		l.gets[r.URL.Path] = append(l.gets[r.URL.Path], r.URL.Query().Get("resourceVersion"))
	} else {
		l.writes[r.URL.Path] = append(l.writes[r.URL.Path], r.Method)
	}
	l.mu.Unlock()
	return l.inner.RoundTrip(r)
}

// methods returns and forgets the methods of the writes to paths that end
// with suffix; a create is a POST to the collection.
func (l *readLog) methods(suffix string) []string { return l.take(true, suffix) }

// of returns and forgets the reads of paths that end with suffix.
func (l *readLog) of(suffix string) []string { return l.take(false, suffix) }

func (l *readLog) take(writes bool, suffix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.gets
	if writes {
		log = l.writes
	}
	var out []string
	for path, entries := range log {
		if strings.HasSuffix(path, suffix) {
			out = append(out, entries...)
			delete(log, path)
		}
	}
	return out
}

// TestModuleReadsUseTheServersCache: a module's new objects are created,
// without a read before; the first recheck of the applied objects is served
// from the runtime API server's cache (resourceVersion 0), not read from
// etcd with a quorum read. Later looks read etcd: a resync must see a
// drift the cache may not hold yet.
func TestModuleReadsUseTheServersCache(t *testing.T) {
	h := newHeldInstall(t, "cachedreads")
	deployment := "/deployments/cachedreads-operator"
	h.reconcile(t)
	assert.Empty(t, h.reads.of(deployment), "a new object is not read before it is written")
	assert.Equal(t, []string{http.MethodPost}, h.reads.methods("/deployments"), "a new object is created, not applied")

	require.NoError(t, testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, h.runtimeNamespace, "cachedreads-operator"))
	h.reconcile(t)
	require.Equal(t, shared.StateReady, h.stored(t).Status.State)
	assert.Equal(t, []string{"0"}, h.reads.of(deployment), "the first recheck's read of the Deployment")

	h.reconcile(t)
	assert.Equal(t, []string{""}, h.reads.of(deployment), "a resync's read is a quorum read")
}

// TestAPushedWriteIsReadFromStorage: a recheck that must read past a
// write an agent pushed reads etcd, even the first recheck of an install.
func TestAPushedWriteIsReadFromStorage(t *testing.T) {
	h := newHeldInstall(t, "pushedread")
	h.reconcile(t)
	h.reads.of("/deployments/pushedread-operator")

	waits, err := push.NewWaits(prometheus.NewRegistry(), "test", push.WaitsOptions{})
	require.NoError(t, err)
	obj := push.Object{GroupKind: schema.GroupKind{Group: "apps", Kind: "Deployment"},
		NamespacedName: types.NamespacedName{Namespace: h.runtimeNamespace, Name: "pushedread-operator"}}
	waits.Expect(h.key, obj, "1", time.Now())
	h.reconciler.Fresh = waits
	h.reconcile(t)
	assert.Equal(t, []string{""}, h.reads.of("/deployments/pushedread-operator"), "a read past a pushed write is a quorum read")
}
