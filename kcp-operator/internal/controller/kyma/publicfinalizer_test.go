package kyma_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

var bystander sync.Once

// keepRuntimeCRDs makes sure a Kyma that is not deleted lives in the
// shared runtime: deleting the last one removes our CRDs from it, and a
// test run alone would then start its next Kyma while they terminate.
func keepRuntimeCRDs(t *testing.T) {
	t.Helper()
	bystander.Do(func() {
		newKyma(t, "heirs-bystander")
		eventuallyKyma(t, "heirs-bystander", "Ready", stateIs(shared.StateReady))
	})
}

// kymaAndManifestGone waits until the Kyma and its Manifest are deleted.
func kymaAndManifestGone(t *testing.T, kyma, manifest string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := getManifest(t, manifest)
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the Manifest is gone")
	require.Eventually(t, func() bool {
		err := kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: kyma}, &v1beta2.Kyma{})
		return apierrors.IsNotFound(err)
	}, timeout, tick, "the Kyma is gone")
}

// TestPublicFinalizerIsTakenOver checks that a Manifest carrying the public
// lifecycle manager's finalizers gets ours in their place, so that deleting
// its Kyma completes.
func TestPublicFinalizerIsTakenOver(t *testing.T) {
	keepRuntimeCRDs(t)
	kymaWithModule(t, "inherited", module{Name: "heirloom", Version: "1.0.0"})
	eventuallyManifest(t, "inherited-heirloom", "installed", appliedAll(3))

	updateManifest(t, "inherited-heirloom", func(mf *v1beta2.Manifest) {
		mf.Finalizers = append(mf.Finalizers, shared.PublicManifestFinalizers()...)
	})
	eventuallyManifest(t, "inherited-heirloom", "the public finalizers replaced by ours", func(mf *v1beta2.Manifest) bool {
		return slices.Equal(mf.Finalizers, []string{shared.ManifestFinalizer})
	})

	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "inherited")))
	kymaAndManifestGone(t, "inherited", "inherited-heirloom")
}

// TestManifestHeldByThePublicFinalizerIsDeleted checks the deletion of a
// Manifest that still carries only the public lifecycle manager's
// finalizers when its deletion starts (deleted before the operator took it
// over): the module is removed and the finalizers with it.
func TestManifestHeldByThePublicFinalizerIsDeleted(t *testing.T) {
	keepRuntimeCRDs(t)
	kymaWithModule(t, "bequeathed", module{Name: "bequest", Version: "1.0.0"})
	eventuallyManifest(t, "bequeathed-bequest", "installed", appliedAll(3))

	// Skipping keeps the Manifest controller away while the Manifest is
	// made the public operator's and its deletion starts.
	updateManifest(t, "bequeathed-bequest", func(mf *v1beta2.Manifest) {
		mf.Labels[shared.SkipReconciliationLabel] = shared.EnabledValue
		mf.Finalizers = shared.PublicManifestFinalizers()
	})
	require.NoError(t, kcp.Client.Delete(t.Context(), getKyma(t, "bequeathed")))
	deleted := getKyma(t, "bequeathed").DeletionTimestamp
	require.NotNil(t, deleted)
	eventuallyManifest(t, "bequeathed-bequest", "deletion started", func(mf *v1beta2.Manifest) bool { return !mf.DeletionTimestamp.IsZero() })
	updateManifest(t, "bequeathed-bequest", func(mf *v1beta2.Manifest) { delete(mf.Labels, shared.SkipReconciliationLabel) })

	// The Purge controller removes the finalizers too, after its grace
	// period: the Manifest controller must be done before then (the
	// deletion timestamp has whole seconds, hence the second off).
	beforePurge := time.Until(deleted.Add(purgeGrace - time.Second))
	require.True(t, waitFor(beforePurge, func() bool {
		_, err := getManifest(t, "bequeathed-bequest")
		return apierrors.IsNotFound(err)
	}), "the Manifest controller removes the Manifest before the purge would")
	kymaAndManifestGone(t, "bequeathed", "bequeathed-bequest")
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "bequeathed", Name: "bequest-operator"}}
	require.True(t, goneOrGoing(t, dep), "the module was removed, not only released")
}
