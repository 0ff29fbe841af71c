package suite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// TestTheDocumentationsV1beta1Kyma applies the Kyma of the public lifecycle
// manager's original documentation, in v1beta1 with spec.sync, through the
// operator's conversion webhook, and reads it back in both versions.
func TestTheDocumentationsV1beta1Kyma(t *testing.T) {
	ctx := t.Context()
	step(t, "Given the v1beta1 Kyma of the documentation, with sync.namespace custom-sync-namespace")
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "api", "config", "samples", "kyma-v1beta1.yaml"))
	require.NoError(t, err)
	applied := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(raw, &applied.Object))
	applied.SetNamespace(harness.Namespace)
	key := client.ObjectKeyFromObject(applied)
	t.Cleanup(func() { deleteV1beta1Kyma(t, key) })

	step(t, "When it is applied as v1beta1")
	var last error
	require.Eventually(t, func() bool {
		last = h.KCP.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied.DeepCopy()), client.FieldOwner("e2e-v1beta1"))
		return last == nil
	}, timeout, tick, "applying the v1beta1 Kyma (the webhook's certificate and caBundle come within seconds): %v", &last)

	step(t, "Then it reads back as v1beta2: channel and modules, sync.namespace as the sync-namespace annotation, the rest of spec.sync kept")
	hub := &v1beta2.Kyma{}
	require.NoError(t, h.KCP.Client.Get(ctx, key, hub))
	assert.Equal(t, "alpha", hub.Spec.Channel)
	require.Len(t, hub.Spec.Modules, 2)
	keda := hub.Spec.Modules[0]
	assert.Equal(t, []string{"keda", "regular"}, []string{keda.Name, keda.Channel})
	assert.Equal(t, v1beta2.CustomResourcePolicyCreateAndDelete, keda.CustomResourcePolicy, "v1beta1's default")
	assert.True(t, keda.IsManaged(), "v1beta2's default")
	assert.Equal(t, "custom-sync-namespace", hub.Annotations[shared.SyncNamespaceAnnotation])
	assert.JSONEq(t, `{"sync":{"enabled":true,"strategy":"secret","namespace":"custom-sync-namespace","moduleCatalog":true,"noModuleCopy":true}}`,
		hub.Annotations[v1beta1.V1beta1SpecAnnotation])

	step(t, "And the operator's writes to it (v1beta2) show through v1beta1: its finalizer and its status")
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("Kyma"))
	require.Eventually(t, func() bool {
		if h.KCP.Client.Get(ctx, key, old) != nil {
			return false
		}
		state, _, _ := unstructured.NestedString(old.Object, "status", "state")
		return state != "" && len(old.GetFinalizers()) > 0
	}, timeout, tick, "the operator reconciles the v1beta1 Kyma")

	step(t, "And reading it as v1beta1 gives back the spec that was applied, with nothing of the conversion in sight")
	for _, field := range []string{"channel", "sync"} {
		assert.Equal(t, applied.Object["spec"].(map[string]any)[field], old.Object["spec"].(map[string]any)[field], field)
	}
	assert.NotContains(t, old.GetAnnotations(), v1beta1.V1beta1SpecAnnotation)
	assert.NotContains(t, old.GetAnnotations(), v1beta1.V1beta2SpecAnnotation)
	assert.NotContains(t, old.GetAnnotations(), shared.SyncNamespaceAnnotation)
}

// deleteV1beta1Kyma deletes the scenario's Kyma and waits until it is gone
// (purged, at the latest, after the harness's purge grace period).
func deleteV1beta1Kyma(t *testing.T, key client.ObjectKey) {
	ctx := context.Background() // the test's context has ended
	k := &v1beta2.Kyma{}
	k.Namespace, k.Name = key.Namespace, key.Name
	if err := h.KCP.Client.Delete(ctx, k); apierrors.IsNotFound(err) {
		return
	} else if err != nil {
		t.Errorf("deleting Kyma %s: %v", key, err)
		return
	}
	assert.Eventually(t, func() bool {
		return apierrors.IsNotFound(h.KCP.Client.Get(ctx, key, &v1beta2.Kyma{}))
	}, 2*timeout, tick, "Kyma %s was not gone within %s", key, 2*timeout)
}
