package kyma_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	manifestctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

type countingTransport struct {
	next  http.RoundTripper
	count *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.count.Add(1)
	return c.next.RoundTrip(r)
}

// noOpManifest installs module name into a Kyma of the same name, waits
// until it is Ready, and returns a reconcile of its Manifest as a resync
// does it, with counters of the runtime requests and KCP writes it makes.
func noOpManifest(tb testing.TB, name string) (reconcile func() error, runtimeRequests, kcpWrites *atomic.Int64) {
	ctx := context.Background()
	require.NoError(tb, testmodule.Module{Name: name, Version: "1.0.0", Data: testmodule.DefaultCR(testmodule.Kind(name))}.
		Publish(ctx, kcp.Client, reg.Host, kcpNamespace))
	require.NoError(tb, kcp.Client.Create(ctx, &v1beta2.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kcpNamespace},
		Spec:       v1beta2.ModuleReleaseMetaSpec{ModuleName: name, Channels: []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "1.0.0"}}},
	}))
	require.NoError(tb, kcp.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + name, Namespace: kcpNamespace, Labels: map[string]string{shared.KymaNameLabel: name}},
		Data:       map[string][]byte{shared.KubeconfigSecretKey: runtimeConfig},
	}))
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kcpNamespace}, Spec: v1beta2.KymaSpec{Modules: []v1beta2.Module{{Name: name}}}}
	kyma.Annotations = map[string]string{shared.SyncNamespaceAnnotation: name}
	require.NoError(tb, kcp.Client.Create(ctx, kyma))
	key := client.ObjectKey{Namespace: kcpNamespace, Name: name + "-" + name}
	require.Eventually(tb, func() bool {
		_ = testmodule.MarkAvailable(ctx, runtimeEnv.Client, name, name+"-operator")
		_ = testmodule.SetCRState(ctx, runtimeEnv.Client, name, name, "Ready")
		mf := &v1beta2.Manifest{}
		return kcp.Client.Get(ctx, key, mf) == nil && mf.Status.State == shared.StateReady
	}, timeout, tick, "the module is installed and Ready")

	runtimeRequests, kcpWrites = &atomic.Int64{}, &atomic.Int64{}
	kcpClient := countingClient{Client: operatorClient, writes: kcpWrites}
	runtimes := remote.New(operatorClient, kcp.Config, kcp.Scheme, remote.Options{
		QPS: 10000, Burst: 10000, Timeout: 10 * time.Second,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return countingTransport{next: rt, count: runtimeRequests}
		},
	}, nil, logr.Discard())
	fetcher, err := oci.NewFetcher(oci.Options{CacheDir: layerCacheDir, InsecureRegistries: []string{reg.Host}})
	require.NoError(tb, err)
	r := &manifestctrl.Reconciler{
		KCP: kcpClient, Runtimes: runtimes, Events: events.NewFakeRecorder(1000), Parallelism: 8,
		Requeue: schedule.Requeue{Success: time.Hour, Busy: time.Second, Warning: time.Second, Error: time.Second},
		Source:  suiteSource(fetcher),
	}
	req := ctrl.Request{NamespacedName: key}
	reconcile = func() error {
		_, err := r.Reconcile(ctx, req)
		return err
	}
	require.NoError(tb, reconcile()) // warm: the runtime connection, discovery, the render cache
	runtimeRequests.Store(0)
	kcpWrites.Store(0)
	return reconcile, runtimeRequests, kcpWrites
}

// TestManifestNoOpReconcileOnlyReads holds a resync of a module in place to
// its budget: no KCP write, and one runtime read per applied object (CRD,
// Deployment, ConfigMap) and one of the module CR. The Deployment, read
// whole for the in-place check, also answers readiness.
func TestManifestNoOpReconcileOnlyReads(t *testing.T) {
	reconcile, runtimeRequests, kcpWrites := noOpManifest(t, "noop")
	require.NoError(t, reconcile())
	assert.Equal(t, int64(0), kcpWrites.Load(), "KCP writes")
	assert.Equal(t, int64(4), runtimeRequests.Load(), "runtime requests")
}

// BenchmarkManifestNoOpReconcile reports what a resync of a module in
// place costs: runtime API requests and KCP writes per reconcile (the goal:
// reads only, no writes, no layer download), time and allocations.
func BenchmarkManifestNoOpReconcile(b *testing.B) {
	// A module of its own per invocation: -count=N runs this N times
	// against the same API servers.
	reconcile, runtimeRequests, kcpWrites := noOpManifest(b, "bench"+randomLetters(6))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		if err := reconcile(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(runtimeRequests.Load())/float64(n), "runtime-requests/op")
	b.ReportMetric(float64(kcpWrites.Load())/float64(n), "kcp-writes/op")
}

// suiteSource renders modules as the suite's operator does, so that a
// reconciler of a test and the suite's agree on what is in place.
func suiteSource(fetcher *oci.Fetcher) *manifestctrl.LayerSource {
	return &manifestctrl.LayerSource{Fetcher: fetcher, Renderer: render.New(render.Options{}), Secrets: kcp.Client, RuntimePullSecret: pullSecret}
}

// randomLetters returns n random lowercase letters: module names allow
// nothing else.
func randomLetters(n int) string {
	return strings.Map(func(r rune) rune {
		if r >= '2' && r <= '7' { // base32's digits
			return 'a' + (r - '2')
		}
		return r - 'A' + 'a'
	}, rand.Text()[:n])
}

// countingClient counts the writes a reconcile makes to the KCP; its reads
// come from the cache and cost no request.
type countingClient struct {
	client.Client
	writes *atomic.Int64
}

func (c countingClient) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	c.writes.Add(1)
	return c.Client.Patch(ctx, o, p, opts...)
}

func (c countingClient) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	c.writes.Add(1)
	return c.Client.Update(ctx, o, opts...)
}

func (c countingClient) Status() client.SubResourceWriter {
	return countingStatus{SubResourceWriter: c.Client.Status(), writes: c.writes}
}

type countingStatus struct {
	client.SubResourceWriter
	writes *atomic.Int64
}

func (c countingStatus) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	c.writes.Add(1)
	return c.SubResourceWriter.Patch(ctx, o, p, opts...)
}

func (c countingStatus) Apply(ctx context.Context, o runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	c.writes.Add(1)
	return c.SubResourceWriter.Apply(ctx, o, opts...)
}
