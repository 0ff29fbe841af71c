package kyma_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	manifestctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// heldInstall is a Manifest that only a Manifest reconciler of the test's
// own reconciles, one step at a time: it lives in a KCP namespace the
// suite's operator does not watch, with a copy of the spec the operator
// made for a Kyma of the same module.
type heldInstall struct {
	reconciler *manifestctrl.Reconciler
	key        client.ObjectKey
	// runtimeNamespace holds the module's objects in the runtime.
	module, runtimeNamespace string
	// kcpWrites and runtimePatches count what the reconciles wrote.
	kcpWrites, runtimePatches *atomic.Int64
	// reads logs the runtime's GETs.
	reads *readLog
	// restart replaces the reconciler by a new one, as after a restart of
	// the operator: what the old one kept in memory is gone.
	restart func()
}

func newHeldInstall(t *testing.T, name string) *heldInstall {
	t.Helper()
	return newHeldInstallOf(t, name, func(ctx context.Context) error {
		return testmodule.Module{Name: name, Version: "1.0.0"}.Publish(ctx, kcp.Client, reg.Host, kcpNamespace)
	})
}

// newHeldInstallOf is newHeldInstall of the module that publish publishes
// under name, version 1.0.0.
func newHeldInstallOf(t *testing.T, name string, publish func(context.Context) error) *heldInstall {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, publish(ctx))
	releaseMeta(t, name, map[string]string{"regular": "1.0.0"})
	newKyma(t, name, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: name}} })
	model := &v1beta2.Manifest{}
	require.Eventually(t, func() bool {
		return kcp.Client.Get(ctx, client.ObjectKey{Namespace: kcpNamespace, Name: name + "-" + name}, model) == nil
	}, timeout, tick, "the operator creates the Manifest the test copies")

	ns := "direct-" + name
	require.NoError(t, kcp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	require.NoError(t, kcp.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + name, Namespace: ns, Labels: map[string]string{shared.KymaNameLabel: name}},
		Data:       map[string][]byte{shared.KubeconfigSecretKey: runtimeConfig},
	}))
	require.NoError(t, kcp.Client.Create(ctx, &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{shared.SyncNamespaceAnnotation: ns}},
	}))
	mf := &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Name: model.Name, Namespace: ns, Labels: model.Labels}, Spec: model.Spec}
	require.NoError(t, kcp.Client.Create(ctx, mf))

	require.NoError(t, runtimeEnv.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	h := &heldInstall{key: client.ObjectKeyFromObject(mf), module: name, runtimeNamespace: ns, kcpWrites: &atomic.Int64{}, runtimePatches: &atomic.Int64{}, reads: &readLog{}}
	runtimes := remote.New(secretsOf(t, ns), kcp.Config, kcp.Scheme, remote.Options{
		QPS: 1000, Burst: 1000, Timeout: 10 * time.Second,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return patchCounter{next: h.reads.wrap(rt), count: h.runtimePatches}
		},
	}, nil, logr.Discard())
	fetcher, err := oci.NewFetcher(oci.Options{CacheDir: t.TempDir(), InsecureRegistries: []string{reg.Host}})
	require.NoError(t, err)
	h.restart = func() {
		h.reconciler = &manifestctrl.Reconciler{
			KCP: countingClient{Client: kcp.Client, writes: h.kcpWrites}, Runtimes: runtimes, Events: events.NewFakeRecorder(100), Parallelism: 4,
			Requeue: schedule.Requeue{Success: time.Hour, Busy: time.Second, Warning: time.Second, Error: time.Second},
			Source:  suiteSource(fetcher),
		}
	}
	h.restart()
	return h
}

// secretsOf is a cache of the KCP namespace ns with the operator's
// indexes, from which the runtime connections read the access Secrets.
func secretsOf(t *testing.T, ns string) client.Reader {
	t.Helper()
	c, err := cache.New(kcp.Config, cache.Options{Scheme: kcp.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	require.NoError(t, err)
	require.NoError(t, index.Register(t.Context(), c))
	go func() { _ = c.Start(t.Context()) }()
	require.True(t, c.WaitForCacheSync(t.Context()))
	return c
}

func (h *heldInstall) reconcile(t *testing.T) ctrl.Result {
	t.Helper()
	res, err := h.reconciler.Reconcile(t.Context(), ctrl.Request{NamespacedName: h.key})
	require.NoError(t, err)
	return res
}

// stored is the Manifest as the KCP stores it.
func (h *heldInstall) stored(t *testing.T) *v1beta2.Manifest {
	t.Helper()
	mf := &v1beta2.Manifest{}
	require.NoError(t, kcp.Client.Get(t.Context(), h.key, mf))
	return mf
}

func (h *heldInstall) deployment(ctx context.Context) error {
	return runtimeEnv.Client.Get(ctx, client.ObjectKey{Namespace: h.runtimeNamespace, Name: h.module + "-operator"}, &appsv1.Deployment{})
}

// patchCounter counts the PATCH requests (server-side applies) a runtime
// serves.
type patchCounter struct {
	next  http.RoundTripper
	count *atomic.Int64
}

func (p patchCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch {
		p.count.Add(1)
	}
	return p.next.RoundTrip(r)
}

// TestAnInstallReadyByItsFirstRecheckWritesOnlyReady: the reconcile that
// applies a module first writes no record before it (what it places
// carries the Manifest's label), keeps the Processing status after the
// apply and rechecks soon; the recheck finds the workloads ready and
// writes Ready, with the applied record, as the install's one status
// write. The recheck does not apply again: it reads the held record as
// the Manifest's.
func TestAnInstallReadyByItsFirstRecheckWritesOnlyReady(t *testing.T) {
	h := newHeldInstall(t, "heldready")
	res := h.reconcile(t)
	assert.Positive(t, res.RequeueAfter, "a held status is rechecked")
	require.NoError(t, h.deployment(t.Context()), "the module is applied")
	recorded := h.stored(t).Status
	assert.Empty(t, recorded.Synced, "a first install writes no record before the apply")
	assert.Empty(t, recorded.Applied, "the status after the apply is held while the workloads start")
	assert.Equal(t, int64(1), h.kcpWrites.Load(), "KCP writes of the install: the finalizer")

	require.NoError(t, testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, h.runtimeNamespace, "heldready-operator"))
	h.kcpWrites.Store(0)
	h.runtimePatches.Store(0)
	h.reconcile(t)
	mf := h.stored(t)
	assert.Equal(t, shared.StateReady, mf.Status.State)
	assert.NotEmpty(t, mf.Status.Applied, "the applied record is written with Ready")
	assert.Len(t, mf.Status.Synced, 3, "the module's objects are recorded")
	assert.Equal(t, int64(1), h.kcpWrites.Load(), "KCP writes of the recheck: the status, once")
	assert.Zero(t, h.runtimePatches.Load(), "the recheck applies nothing again")
}

// TestAHeldStatusIsWrittenWhenTheModuleStillWaits: a status is held only
// until the first recheck; a module still starting then shows Processing.
func TestAHeldStatusIsWrittenWhenTheModuleStillWaits(t *testing.T) {
	h := newHeldInstall(t, "heldwaits")
	h.reconcile(t)
	assert.Empty(t, h.stored(t).Status.Applied, h.stored(t).Status.LastOperation.Operation)
	h.reconcile(t)
	mf := h.stored(t)
	assert.Equal(t, shared.StateProcessing, mf.Status.State)
	assert.NotEmpty(t, mf.Status.Applied)
	assert.Len(t, mf.Status.Synced, 3)
}

// TestAManifestDeletedBeforeItsHeldStatusRemovesTheModule: the objects
// applied in the reconcile whose status was held are deleted with the
// Manifest, not left behind unrecorded.
func TestAManifestDeletedBeforeItsHeldStatusRemovesTheModule(t *testing.T) {
	h := newHeldInstall(t, "heldgone")
	h.reconcile(t)
	require.NoError(t, h.deployment(t.Context()))
	require.NoError(t, kcp.Client.Delete(t.Context(), h.stored(t)))
	require.Eventually(t, func() bool {
		_, _ = h.reconciler.Reconcile(t.Context(), ctrl.Request{NamespacedName: h.key})
		return apierrors.IsNotFound(kcp.Client.Get(t.Context(), h.key, &v1beta2.Manifest{}))
	}, timeout, tick, "the Manifest's deletion finishes")
	assert.True(t, apierrors.IsNotFound(h.deployment(t.Context())), "the module's Deployment is deleted with the Manifest")
}

// TestADeletionReadsPastALaggingCache: the reconcile after one that wrote
// a deletion's first status (blocked by a user's CR, here) may read the
// Manifest from a cache that holds neither that status nor the held one,
// dropped once written. It must still delete the module's objects before
// it lets the Manifest go.
func TestADeletionReadsPastALaggingCache(t *testing.T) {
	h := newHeldInstall(t, "lagging")
	h.reconcile(t)
	require.NoError(t, h.deployment(t.Context()))
	mine := &unstructured.Unstructured{Object: defaultCR("Lagging")}
	mine.SetName("mine")
	mine.SetNamespace(h.runtimeNamespace)
	require.NoError(t, runtimeEnv.Client.Create(t.Context(), mine))
	require.NoError(t, kcp.Client.Delete(t.Context(), h.stored(t)))
	// The two reconciles below each read the Manifest once as it was
	// before their writes; reads after those see the API server's.
	lagging := laggingCache{Client: h.reconciler.KCP, frozen: h.stored(t), stale: &atomic.Int32{}}
	lagging.stale.Store(2)
	h.reconciler.KCP = lagging
	h.reconciler.APIReader = kcp.Client

	h.reconcile(t)
	require.Equal(t, shared.StateWarning, h.stored(t).Status.State, "the deletion waits for the user's CR: %s",
		h.stored(t).Status.LastOperation.Operation)
	require.NoError(t, runtimeEnv.Client.Delete(t.Context(), mine))
	require.Eventually(t, func() bool {
		_, _ = h.reconciler.Reconcile(t.Context(), ctrl.Request{NamespacedName: h.key})
		return apierrors.IsNotFound(kcp.Client.Get(t.Context(), h.key, &v1beta2.Manifest{}))
	}, timeout, tick, "the Manifest's deletion finishes")
	assert.True(t, apierrors.IsNotFound(h.deployment(t.Context())), "the module's Deployment is deleted with the Manifest")
}

// laggingCache is a fake of an informer cache behind the API server: its
// next stale reads of frozen's Manifest answer frozen, later ones what the
// API server holds.
type laggingCache struct {
	client.Client
	frozen *v1beta2.Manifest
	stale  *atomic.Int32
}

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if mf, ok := obj.(*v1beta2.Manifest); ok && key == client.ObjectKeyFromObject(c.frozen) && c.stale.Add(-1) >= 0 {
		c.frozen.DeepCopyInto(mf)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}
