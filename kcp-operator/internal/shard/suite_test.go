package shard_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// The shard suite: shards as managers of their own against one real API
// server, each with its leader election, its label-selected cache, the
// ownership controller and a guarded writer that stands in for the Kyma's
// controllers and records when it ran.
var kcp *testenv.Env

const (
	ns       = "kcp-system"
	listName = "lifecycle-manager-shards"
	lease    = 2 * time.Second
	timeout  = 30 * time.Second
	tick     = 50 * time.Millisecond
)

func TestMain(m *testing.M) {
	var err error
	if kcp, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "shard suite:", err)
		os.Exit(1)
	}
	code := 1
	if err = kcp.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, "shard suite:", err)
	}
	_ = kcp.Stop()
	os.Exit(code)
}

// ctrlConfigSkipNames lets several managers in one process run
// controllers of the same name.
func ctrlConfigSkipNames() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}

// errorsOnly logs a shard's errors into the test's output.
func errorsOnly(t *testing.T, name string) logr.Logger {
	return funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"error"=`) {
			t.Log(name, prefix, args)
		}
	}, funcr.Options{})
}

func leaseOf(s string) string { return "lifecycle-manager-" + s + ".operator.kyma-project.io" }

// run is one reconcile of the guarded writer.
type run struct {
	shard      string
	kyma       string
	start, end time.Time
}

// journal records the writers' reconciles of every shard.
type journal struct {
	mu   sync.Mutex
	runs []run
	// slow makes a shard's writer take this long per reconcile.
	slow map[string]time.Duration
}

func (j *journal) add(r run) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.runs = append(j.runs, r)
}

func (j *journal) setSlow(s string, d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.slow[s] = d
}

func (j *journal) of(s, kyma string) []run {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []run
	for _, r := range j.runs {
		if r.shard == s && r.kyma == kyma {
			out = append(out, r)
		}
	}
	return out
}

// writer stands in for a Kyma's controllers: each reconcile "writes" for
// the time the journal says, and comes back soon.
type writer struct {
	shard string
	kcp   client.Reader
	j     *journal
}

func (w *writer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var k v1beta2.Kyma
	if err := w.kcp.Get(ctx, req.NamespacedName, &k); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r := run{shard: w.shard, kyma: req.Name, start: time.Now()}
	w.j.mu.Lock()
	d := w.j.slow[w.shard]
	w.j.mu.Unlock()
	time.Sleep(d) // the reconcile's own work, whose length the test sets
	r.end = time.Now()
	w.j.add(r)
	return reconcile.Result{RequeueAfter: 20 * time.Millisecond}, nil
}

// shardProc is one running shard.
type shardProc struct {
	name  string
	stop  context.CancelFunc
	done  chan struct{}
	shard *shard.Shard
	// err is what the manager returned, once done is closed.
	err error
}

// startShard runs shard name until the test ends or kill; release says
// whether it gives its Lease up when stopped (a clean stop) or not (a
// killed process).
func startShard(t *testing.T, name string, j *journal, release bool) *shardProc {
	t.Helper()
	mine := labels.SelectorFromSet(labels.Set{shared.ShardLabel: name})
	lease, renew, retry := lease, lease*10/15, lease*2/15
	mgr, err := ctrl.NewManager(kcp.Config, manager.Options{
		Scheme: kcp.Scheme,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject: map[client.Object]cache.ByObject{
				&v1beta2.Kyma{}:     {Label: mine},
				&v1beta2.Manifest{}: {Label: mine},
				&corev1.Secret{}:    {Label: mine},
				&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", listName)},
			},
		},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              leaseOf(name),
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: release,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		Logger:                        errorsOnly(t, name),
		Controller:                    ctrlConfigSkipNames(),
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := shard.Setup(ctx, mgr, shard.Config{
		Shard: name, Namespaces: []string{ns}, ListName: listName, LeaseOf: leaseOf, OwnerWait: 100 * time.Millisecond,
		Options: func() controller.Options { return controller.Options{MaxConcurrentReconciles: 4} },
		Events:  mgr.GetEventRecorder("shard-test"), Log: mgr.GetLogger(),
	})
	require.NoError(t, err)
	w := &writer{shard: name, kcp: mgr.GetClient(), j: j}
	require.NoError(t, ctrl.NewControllerManagedBy(mgr).Named("writer").For(&v1beta2.Kyma{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).Complete(s.Guard.Kymas(w)))
	p := &shardProc{name: name, stop: cancel, done: make(chan struct{}), shard: s}
	go func() {
		defer close(p.done)
		if p.err = mgr.Start(ctx); p.err != nil {
			t.Logf("shard %s stopped: %v", name, p.err)
		}
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *shardProc) kill() {
	p.stop()
	<-p.done
}

// writeList writes the shard list.
func writeList(t *testing.T, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: listName}}
	_, err := ctrl.CreateOrUpdate(context.Background(), kcp.Client, cm, func() error {
		cm.Data = map[string]string{shard.ListKey: value}
		return nil
	})
	require.NoError(t, err)
}

// newKyma creates a Kyma, labelled for a shard unless shardName is "".
func newKyma(t *testing.T, name, shardName string) types.NamespacedName {
	t.Helper()
	k := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{shared.RuntimeIDLabel: "runtime-" + name}}}
	if shardName != "" {
		k.Labels[shared.ShardLabel] = shardName
	}
	k.Spec.Channel = "regular"
	require.NoError(t, kcp.Client.Create(context.Background(), k))
	t.Cleanup(func() { _ = kcp.Client.Delete(context.Background(), k) })
	return client.ObjectKeyFromObject(k)
}

// reconciled gives a Kyma the finalizer the Kyma controller writes before
// it creates a Manifest, as if an operator had reconciled it.
func reconciled(t *testing.T, key types.NamespacedName) {
	t.Helper()
	k := getKyma(t, key)
	patch := client.MergeFrom(k.DeepCopy())
	k.Finalizers = append(k.Finalizers, shared.KymaFinalizer)
	require.NoError(t, kcp.Client.Patch(context.Background(), k, patch))
	t.Cleanup(func() {
		var k v1beta2.Kyma
		if err := kcp.Client.Get(context.Background(), key, &k); err == nil {
			patch := client.MergeFrom(k.DeepCopy())
			k.Finalizers = nil
			_ = kcp.Client.Patch(context.Background(), &k, patch)
		}
	})
}

func getKyma(t require.TestingT, key types.NamespacedName) *v1beta2.Kyma {
	var k v1beta2.Kyma
	require.NoError(t, kcp.Client.Get(context.Background(), key, &k))
	return &k
}

// relabel moves a Kyma by hand.
func relabel(t *testing.T, key types.NamespacedName, to string) {
	t.Helper()
	k := getKyma(t, key)
	patch := client.MergeFrom(k.DeepCopy())
	k.Labels[shared.ShardLabel] = to
	require.NoError(t, kcp.Client.Patch(context.Background(), k, patch))
}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: listName}}
}
