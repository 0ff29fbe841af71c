package remote_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

var (
	env *testenv.Env
	// kcp reads through an indexed informer cache, as the operator's
	// manager client does.
	kcp client.Client
)

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.Start(testenv.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if kcp, err = cachedClient(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cancel()
	_ = env.Stop()
	os.Exit(code)
}

func kymaNamed(name string) *v1beta2.Kyma {
	return &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

func putSecret(t *testing.T, name, kyma string, kubeconfig []byte) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{shared.KymaNameLabel: kyma}},
		Data:       map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}
	err := env.Client.Create(t.Context(), s)
	if apierrors.IsAlreadyExists(err) {
		err = env.Client.Update(t.Context(), s)
	}
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		cached := &corev1.Secret{}
		return kcp.Get(t.Context(), client.ObjectKeyFromObject(s), cached) == nil && cached.ResourceVersion == s.ResourceVersion
	}, 10*time.Second, 10*time.Millisecond, "the cache sees Secret %s", name)
}

func cachedClient(ctx context.Context) (client.Client, error) {
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	if err := index.Register(ctx, c); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("the cache did not sync")
	}
	return client.New(env.Config, client.Options{Scheme: env.Scheme, Cache: &client.CacheOptions{Reader: c}})
}

func newCache(t *testing.T, opts remote.Options) *remote.Cache {
	t.Helper()
	m, err := remote.NewMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	opts.QPS, opts.Burst = 50, 100
	return remote.New(kcp, env.Config, env.Scheme, opts, m, logr.Discard())
}

func TestClientsAreSharedByKubeconfigAndReplacedOnRotation(t *testing.T) {
	adminA, err := env.Kubeconfig("runtime-a", "system:masters")
	require.NoError(t, err)
	adminB, err := env.Kubeconfig("runtime-b", "system:masters")
	require.NoError(t, err)
	putSecret(t, "kc-one", "one", adminA)
	putSecret(t, "kc-two", "two", adminA)
	cache := newCache(t, remote.Options{})

	one, err := cache.For(t.Context(), kymaNamed("one"))
	require.NoError(t, err)
	two, err := cache.For(t.Context(), kymaNamed("two"))
	require.NoError(t, err)
	assert.Same(t, one.Facts, two.Facts, "Kymas with the same kubeconfig share one client")
	assert.Equal(t, 1, cache.Len())
	var nss corev1.NamespaceList
	require.NoError(t, one.List(t.Context(), &nss), "the client works")

	putSecret(t, "kc-one", "one", adminB)
	rotated, err := cache.For(t.Context(), kymaNamed("one"))
	require.NoError(t, err)
	assert.NotSame(t, one.Facts, rotated.Facts, "a rotated kubeconfig gets a new client")
	assert.Equal(t, 2, cache.Len())
}

func TestRuntimeNamespace(t *testing.T) {
	k := kymaNamed("x")
	assert.Equal(t, "kyma-system", remote.RuntimeNamespace(k))
	k.Annotations = map[string]string{shared.SyncNamespaceAnnotation: "rt-0042"}
	assert.Equal(t, "rt-0042", remote.RuntimeNamespace(k))
}

func TestMissingOrAmbiguousKubeconfig(t *testing.T) {
	cache := newCache(t, remote.Options{})
	_, err := cache.For(t.Context(), kymaNamed("nobody"))
	require.ErrorIs(t, err, remote.ErrNoKubeconfig)
	assert.Contains(t, err.Error(), "labelled operator.kyma-project.io/kyma-name=nobody")

	kc, err := env.Kubeconfig("twice", "system:masters")
	require.NoError(t, err)
	putSecret(t, "kc-twice-1", "twice", kc)
	putSecret(t, "kc-twice-2", "twice", kc)
	_, err = cache.For(t.Context(), kymaNamed("twice"))
	require.ErrorIs(t, err, remote.ErrNoKubeconfig)
	assert.Contains(t, err.Error(), "2 Secrets")

	putSecret(t, "kc-garbage", "garbage", []byte("{not a kubeconfig"))
	_, err = cache.For(t.Context(), kymaNamed("garbage"))
	assert.ErrorContains(t, err, "runtime kubeconfig of Kyma default/garbage in Secret default/kc-garbage is refused: kubeconfig: cannot be read")
	assert.True(t, remote.Refused(err), "an unreadable kubeconfig stays so until its Secret changes")
}

func TestBrokenClientsAreForgotten(t *testing.T) {
	kc, err := env.Kubeconfig("forget", "system:masters")
	require.NoError(t, err)
	putSecret(t, "kc-forget", "forget", kc)
	cache := newCache(t, remote.Options{})
	rt, err := cache.For(t.Context(), kymaNamed("forget"))
	require.NoError(t, err)

	assert.False(t, cache.Forget(rt, apierrors.NewNotFound(schema.GroupResource{Resource: "kymas"}, "x")),
		"an API error keeps the client")
	assert.Equal(t, 1, cache.Len())
	assert.True(t, cache.Forget(rt, &url.Error{Op: "Get", URL: "https://x", Err: syscall.ECONNREFUSED}))
	assert.Equal(t, 0, cache.Len())
	assert.False(t, cache.Forget(rt, syscall.ECONNREFUSED), "forgetting twice is harmless")
}

func TestIdleClientsExpire(t *testing.T) {
	kc, err := env.Kubeconfig("idle", "system:masters")
	require.NoError(t, err)
	putSecret(t, "kc-idle", "idle", kc)
	cache := newCache(t, remote.Options{IdleTTL: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = cache.Start(ctx) }()
	_, err = cache.For(t.Context(), kymaNamed("idle"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return cache.Len() == 0 }, 5*time.Second, 20*time.Millisecond)
}

func TestSingleClusterUsesTheKCP(t *testing.T) {
	cache := newCache(t, remote.Options{SingleCluster: true})
	rt, err := cache.For(t.Context(), kymaNamed("no-secret-needed"))
	require.NoError(t, err)
	var kymas v1beta2.KymaList
	require.NoError(t, rt.List(t.Context(), &kymas, client.InNamespace("default")))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		want   remote.Reason
		broken bool
	}{
		{"nil", nil, "", false},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "kymas"}, "x"), "", false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "kymas"}, "x", errors.New("c")), "", false},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), remote.ReasonAuthorization, true},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "kymas"}, "x", errors.New("rbac")), remote.ReasonAuthorization, true},
		{"unknown CA", fmt.Errorf("get: %w", x509.UnknownAuthorityError{}), remote.ReasonTLS, true},
		{"connection refused", &url.Error{Op: "Get", URL: "https://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, remote.ReasonConnection, true},
		{"dns", &net.DNSError{Err: "no such host", Name: "x"}, remote.ReasonConnection, true},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), remote.ReasonTimeout, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, broken := remote.Classify(tc.err)
			assert.Equal(t, tc.broken, broken)
			assert.Equal(t, tc.want, got)
		})
	}
}
