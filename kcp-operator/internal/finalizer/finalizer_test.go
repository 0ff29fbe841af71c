package finalizer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/kcp-operator/internal/finalizer"
)

// TestAStaleCopyKeepsOthersFinalizers checks against a real API server
// that a finalizer patch from a stale copy conflicts instead of dropping
// the finalizer someone added meanwhile, and that a fresh copy then works.
func TestAStaleCopyKeepsOthersFinalizers(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	c := env.Client
	ctx := t.Context()
	const ours, theirs = "lifecycle-manager/ours", "someone.else/hold"

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default"}}
	require.NoError(t, c.Create(ctx, cm))
	stale := cm.DeepCopy()
	cm.Finalizers = []string{theirs}
	require.NoError(t, c.Update(ctx, cm), "another party adds its finalizer")

	err := finalizer.Patch(ctx, c, stale, func() { controllerutil.AddFinalizer(stale, ours) })
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "a stale copy conflicts: %v", err)

	fresh := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), fresh))
	require.NoError(t, finalizer.Patch(ctx, c, fresh, func() { controllerutil.AddFinalizer(fresh, ours) }))
	require.NoError(t, finalizer.Remove(ctx, c, fresh, ours))

	got := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), got))
	assert.Equal(t, []string{theirs}, got.Finalizers, "only our finalizer came and went")

	got.Finalizers = nil
	require.NoError(t, c.Update(ctx, got))
	require.NoError(t, c.Delete(ctx, got))
	assert.NoError(t, finalizer.Remove(ctx, c, got, ours), "an object that is gone is fine")
}

// TestRemoveFromAStaleCopy checks that Remove reads the object again after
// a conflict, keeps what others added meanwhile and removes only ours.
func TestRemoveFromAStaleCopy(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	c := env.Client
	ctx := t.Context()
	const ours, theirs = "lifecycle-manager/ours", "someone.else/hold"

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default", Finalizers: []string{ours}}}
	require.NoError(t, c.Create(ctx, cm))
	stale := cm.DeepCopy()
	cm.Finalizers = append(cm.Finalizers, theirs)
	require.NoError(t, c.Update(ctx, cm))

	require.NoError(t, finalizer.Remove(ctx, c, stale, ours))
	got := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), got))
	assert.Equal(t, []string{theirs}, got.Finalizers)
}
