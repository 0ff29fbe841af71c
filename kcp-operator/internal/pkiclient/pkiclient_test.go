package pkiclient_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/trust"
	"github.com/lifecycle-manager/kcp-operator/internal/pkiclient"
)

type counting struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestReadsComeFromCaches runs the PKI's client against a real API server
// with the operator's two caches and counts what still reaches the server.
func TestReadsComeFromCaches(t *testing.T) {
	env, err := testenv.Start(testenv.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	const ns = "kcp-system"
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	secret := func(name string, labels map[string]string) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
		require.NoError(t, env.Client.Create(ctx, s))
	}
	secret("kyma-1-webhook-tls", map[string]string{shared.KymaNameLabel: "kyma-1", shared.PurposeLabel: "agent-tls"})
	secret("ca-bundle", map[string]string{shared.PurposeLabel: trust.PurposeBundle})
	secret("somebody-elses", nil)
	require.NoError(t, env.Client.Create(ctx, &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "kyma-1", Namespace: ns}}))

	managerCache := startCache(t, kymaSecretsCache(t, env.Config, ns))
	own, err := pkiclient.NewSingletonCache(env.Config, cache.Options{Scheme: env.Scheme}, ns, ns)
	require.NoError(t, err)
	startCache(t, own)

	var requests atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{next: rt, n: &requests} })
	direct, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	require.NoError(t, err)
	c := &pkiclient.Client{Client: direct, Secrets: []client.Reader{managerCache, own}, Kymas: managerCache}
	require.NoError(t, direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ca-bundle"}, &corev1.Secret{}),
		"warm: the direct client's discovery, which the operator shares with its manager")

	for _, tc := range []struct {
		name, secret string
		found        bool
		requests     int64
	}{
		{"an agent certificate, from the manager's cache", "kyma-1-webhook-tls", true, 0},
		{"the trust bundle, from the PKI's own cache", "ca-bundle", true, 0},
		{"a Secret no cache holds, from the API server", "somebody-elses", true, 1},
		{"a missing Secret: the API server says so", "not-issued-yet", false, 1},
	} {
		before := requests.Load()
		got := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.secret}, got)
		if tc.found {
			require.NoError(t, err, tc.name)
			assert.Equal(t, tc.secret, got.Name, tc.name)
		} else {
			assert.True(t, apierrors.IsNotFound(err), "%s: %v", tc.name, err)
		}
		assert.Equal(t, tc.requests, requests.Load()-before, tc.name)
	}

	before := requests.Load()
	var kymas v1beta2.KymaList
	require.NoError(t, c.List(ctx, &kymas, client.InNamespace(ns)))
	assert.Len(t, kymas.Items, 1)
	assert.Equal(t, before, requests.Load(), "Kymas are listed from the cache")

	var secrets corev1.SecretList
	require.NoError(t, c.List(ctx, &secrets, client.InNamespace(ns)))
	assert.Len(t, secrets.Items, 3, "a list of Secrets is complete: from the API server, not a partial cache")
	require.NoError(t, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: ns}}))
	assert.Equal(t, before+2, requests.Load(), "lists of other kinds and writes go to the API server")
}

// kymaSecretsCache is a cache like the manager's: Kymas, and Secrets only
// when labelled with a Kyma.
func kymaSecretsCache(t *testing.T, cfg *rest.Config, ns string) cache.Cache {
	t.Helper()
	hasKyma, err := labels.NewRequirement(shared.KymaNameLabel, selection.Exists, nil)
	require.NoError(t, err)
	c, err := cache.New(cfg, cache.Options{
		Scheme:            testenv.NewScheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject:          map[client.Object]cache.ByObject{&corev1.Secret{}: {Label: labels.NewSelector().Add(*hasKyma)}},
	})
	require.NoError(t, err)
	_, err = c.GetInformer(t.Context(), &v1beta2.Kyma{})
	require.NoError(t, err)
	return c
}

func startCache(t *testing.T, c cache.Cache) cache.Cache {
	t.Helper()
	_, err := c.GetInformer(t.Context(), &corev1.Secret{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	require.True(t, c.WaitForCacheSync(t.Context()))
	return c
}
