package v1beta2_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestPublicStatusFieldsSurviveAWrite writes the module status fields the public
// operator sets and reads them back: a CRD that prunes them loses them on the
// first status write after a switch.
func TestPublicStatusFieldsSurviveAWrite(t *testing.T) {
	kyma := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(kymaWithModules(`[{name: keda}]`)), &kyma.Object))
	kyma.SetName("public-status")
	kyma.SetNamespace(namespaceFor(t))
	require.NoError(t, apiServer.Client.Create(t.Context(), kyma))

	module := map[string]any{
		"name":             "keda",
		"state":            "Ready",
		"ocmComponentName": "kyma-project.io/module/keda",
		"maintenance":      true,
	}
	require.NoError(t, unstructured.SetNestedSlice(kyma.Object, []any{module}, "status", "modules"))
	require.NoError(t, apiServer.Client.Status().Update(t.Context(), kyma))

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(kyma.GroupVersionKind())
	require.NoError(t, apiServer.Client.Get(t.Context(), client.ObjectKeyFromObject(kyma), stored))
	modules, _, err := unstructured.NestedSlice(stored.Object, "status", "modules")
	require.NoError(t, err)
	require.Len(t, modules, 1)
	got, ok := modules[0].(map[string]any)
	require.True(t, ok)
	assert.Equal(t, "kyma-project.io/module/keda", got["ocmComponentName"])
	assert.Equal(t, true, got["maintenance"])
}

// TestKymaSelectorSurvivesAWrite stores a restricted module's release meta and
// reads the selector back.
func TestKymaSelectorSurvivesAWrite(t *testing.T) {
	mrm := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(releaseMeta(`{moduleName: keda,
  channels: [{channel: regular, version: 1.0.0}],
  kymaSelector: {matchLabels: {"kyma-project.io/global-account-id": ga-1},
    matchExpressions: [{key: tier, operator: In, values: [gold]}]}}`)), &mrm.Object))
	mrm.SetName("restricted")
	mrm.SetNamespace(namespaceFor(t))
	want, _, err := unstructured.NestedMap(mrm.Object, "spec", "kymaSelector")
	require.NoError(t, err)
	require.NoError(t, apiServer.Client.Create(t.Context(), mrm))

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(mrm.GroupVersionKind())
	require.NoError(t, apiServer.Client.Get(t.Context(), client.ObjectKeyFromObject(mrm), stored))
	got, found, err := unstructured.NestedMap(stored.Object, "spec", "kymaSelector")
	require.NoError(t, err)
	require.True(t, found, "the API server pruned spec.kymaSelector")
	assert.Equal(t, want, got)
}
