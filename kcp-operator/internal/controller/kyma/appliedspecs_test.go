package kyma

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func TestAnAppliedSpecIsTrustedUntilTheCacheShowsIt(t *testing.T) {
	name := types.NamespacedName{Namespace: "kcp-system", Name: "k-sample"}
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		setup func(a *appliedSpecs)
		hash  string
		at    time.Time
		want  bool
	}{
		{"never applied", func(*appliedSpecs) {}, "h1", t0, false},
		{"applied moments ago", func(a *appliedSpecs) { a.record(name, appliedSpec{hash: "h1"}, t0) }, "h1", t0.Add(time.Second), true},
		{"another spec applied", func(a *appliedSpecs) { a.record(name, appliedSpec{hash: "h0"}, t0) }, "h1", t0.Add(time.Second), false},
		{"applied too long ago", func(a *appliedSpecs) { a.record(name, appliedSpec{hash: "h1"}, t0) }, "h1", t0.Add(appliedSpecTTL), false},
		{"the cache showed it", func(a *appliedSpecs) {
			a.record(name, appliedSpec{hash: "h1"}, t0)
			a.forget(name)
		}, "h1", t0.Add(time.Second), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a appliedSpecs
			tc.setup(&a)
			assert.Equal(t, tc.want, a.unseen(name, appliedSpec{hash: tc.hash}, tc.at))
		})
	}
}

func TestOldRecordsTheCacheNeverConfirmedAreDropped(t *testing.T) {
	var a appliedSpecs
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for i := range 4096 {
		a.record(types.NamespacedName{Name: fmt.Sprintf("m-%d", i)}, appliedSpec{hash: "h"}, t0)
	}
	fresh := types.NamespacedName{Name: "fresh"}
	a.record(fresh, appliedSpec{hash: "h"}, t0.Add(appliedSpecTTL))
	assert.Len(t, a.specs, 1, "only the fresh record stays")
}

// TestAManifestIsNotAppliedTwiceWhileTheCacheLags: the Kyma controller
// reads its Manifests from a cache; reconciled again before the cache shows
// the Manifest it just applied, it must not apply the same spec again. A
// new spec, a removed Manifest or the end of the window is applied. The
// client is a fake that counts apply requests (what the KCP API server
// would serve).
func TestAManifestIsNotAppliedTwiceWhileTheCacheLags(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, v1beta2.AddToScheme(scheme))
	applies := 0
	kcp := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			applies++
			return nil
		},
	})
	r := &Reconciler{KCP: kcp}
	manifest := func(hash string) *v1beta2.Manifest {
		return &v1beta2.Manifest{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: "Manifest"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "k-sample", Annotations: map[string]string{shared.SpecHashAnnotation: hash}},
		}
	}
	ctx, t0 := t.Context(), time.Now()

	require.NoError(t, r.writeManifest(ctx, manifest("h1"), t0))
	require.NoError(t, r.writeManifest(ctx, manifest("h1"), t0.Add(time.Second)))
	assert.Equal(t, 1, applies, "the same spec while the cache lags")

	require.NoError(t, r.writeManifest(ctx, manifest("h2"), t0.Add(2*time.Second)))
	assert.Equal(t, 2, applies, "a new spec")

	require.NoError(t, r.writeManifest(ctx, manifest("h2"), t0.Add(2*time.Second+appliedSpecTTL)))
	assert.Equal(t, 3, applies, "the window is over: the Manifest may have been deleted")

	r.applied.forget(client.ObjectKeyFromObject(manifest("h2")))
	require.NoError(t, r.writeManifest(ctx, manifest("h2"), t0.Add(3*time.Second+appliedSpecTTL)))
	assert.Equal(t, 4, applies, "once forgotten (removed, or seen), the cache decides again")
}
