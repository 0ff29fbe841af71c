package runtimesync_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/runtimesync"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// runtimeCluster is a bare kube-apiserver standing in for a runtime.
var runtimeCluster *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, err := testenv.Start(testenv.Options{WithoutAPICRDs: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runtimeCluster = env
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return m.Run()
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kyma-system-"}}
	require.NoError(t, runtimeCluster.Client.Create(t.Context(), ns))
	return ns.Name
}

func material(t *testing.T, cn string) tlssecret.Material {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA("ca", key, time.Now(), time.Hour)
	require.NoError(t, err)
	cert, leafKey, err := ca.Issue(pki.LeafRequest{CommonName: cn, Usage: pki.UsageClient | pki.UsageServer, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)
	return tlssecret.Material{CABundle: pki.EncodeCerts(ca.Cert), Cert: cert, Key: leafKey}
}

func get(t *testing.T, s *runtimesync.Syncer) *corev1.Secret {
	t.Helper()
	var secret corev1.Secret
	require.NoError(t, runtimeCluster.Client.Get(t.Context(), s.Key(), &secret))
	return &secret
}

func TestApplyWritesOnlyChanges(t *testing.T) {
	ctx := t.Context()
	s := runtimesync.New(namespace(t), "skr-agent-tls", nil)
	m1 := material(t, "runtime-1")

	wrote, err := s.Apply(ctx, runtimeCluster.Client, m1)
	require.NoError(t, err)
	assert.True(t, wrote, "the first apply creates the Secret")
	secret := get(t, s)
	got, err := tlssecret.FromSecret(secret)
	require.NoError(t, err)
	assert.True(t, got.Equal(m1))
	assert.Equal(t, m1.Hash(), secret.Annotations[runtimesync.HashAnnotation])
	managers := map[string]bool{}
	for _, f := range secret.ManagedFields {
		managers[f.Manager] = f.Operation == metav1.ManagedFieldsOperationApply
	}
	assert.True(t, managers[runtimesync.FieldOwner], "written by server-side apply with its own field owner: %v", managers)

	for range 3 {
		wrote, err = s.Apply(ctx, runtimeCluster.Client, m1)
		require.NoError(t, err)
		assert.False(t, wrote, "unchanged material is not written again")
	}
	assert.Equal(t, secret.ResourceVersion, get(t, s).ResourceVersion, "no write reached the API server")

	m2 := material(t, "runtime-1")
	wrote, err = s.Apply(ctx, runtimeCluster.Client, m2)
	require.NoError(t, err)
	assert.True(t, wrote)
	got, err = tlssecret.FromSecret(get(t, s))
	require.NoError(t, err)
	assert.True(t, got.Equal(m2))
}

func TestApplyRepairsEditedData(t *testing.T) {
	ctx := t.Context()
	s := runtimesync.New(namespace(t), "skr-agent-tls", nil)
	m := material(t, "runtime-1")
	_, err := s.Apply(ctx, runtimeCluster.Client, m)
	require.NoError(t, err)

	// Someone replaces the certificate by hand and leaves the hash annotation.
	secret := get(t, s)
	secret.Data[tlssecret.CertKey] = material(t, "intruder").Cert
	require.NoError(t, runtimeCluster.Client.Update(ctx, secret))

	wrote, err := s.Apply(ctx, runtimeCluster.Client, m)
	require.NoError(t, err)
	assert.True(t, wrote, "data that differs from the hash is written back")
	got, err := tlssecret.FromSecret(get(t, s))
	require.NoError(t, err)
	assert.True(t, got.Equal(m))
}

func TestApplyRefusesBadInput(t *testing.T) {
	ctx := t.Context()
	s := runtimesync.New(namespace(t), "skr-agent-tls", nil)
	a, b := material(t, "a"), material(t, "b")
	_, err := s.Apply(ctx, runtimeCluster.Client, tlssecret.Material{CABundle: a.CABundle, Cert: a.Cert, Key: b.Key})
	assert.ErrorContains(t, err, "does not match")
	err = runtimeCluster.Client.Get(ctx, s.Key(), &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err), "nothing was written: %v", err)

	missing := runtimesync.New("no-such-namespace", "skr-agent-tls", nil)
	_, err = missing.Apply(ctx, runtimeCluster.Client, a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no-such-namespace/skr-agent-tls")
}

func TestDelete(t *testing.T) {
	ctx := t.Context()
	s := runtimesync.New(namespace(t), "skr-agent-tls", nil)
	_, err := s.Apply(ctx, runtimeCluster.Client, material(t, "runtime-1"))
	require.NoError(t, err)
	require.NoError(t, s.Delete(ctx, runtimeCluster.Client))
	err = runtimeCluster.Client.Get(ctx, s.Key(), &corev1.Secret{})
	assert.True(t, apierrors.IsNotFound(err))
	require.NoError(t, s.Delete(ctx, runtimeCluster.Client), "deleting twice is fine")
}
