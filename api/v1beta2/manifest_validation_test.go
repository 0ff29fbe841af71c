package v1beta2_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

func manifestWith(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`apiVersion: operator.kyma-project.io/v1beta2
kind: Manifest
metadata: {name: keda}
spec:
  install: {name: raw-manifest, source: {repo: registry.example.com/modules, name: keda, ref: 1.0.0}}
`+spec), &obj.Object))
	obj.SetNamespace(namespaceFor(t))
	return obj
}

func TestManifestRemoteFalseIsRefused(t *testing.T) {
	err := apiServer.Client.Create(t.Context(), manifestWith(t, "  remote: false\n"), client.DryRunAll)
	require.Error(t, err, "the API server accepted a Manifest for the control plane")
	assert.True(t, apierrors.IsInvalid(err), "want an Invalid error, got %v", err)
	assert.Contains(t, err.Error(), "spec.remote: false (install into the control plane) is not supported")
	assert.Contains(t, err.Error(), "--feature-gates=SingleCluster=true", "the message says what to do instead")

	require.NoError(t, apiServer.Client.Create(t.Context(), manifestWith(t, "  remote: true\n"), client.DryRunAll))
}

// TestManifestHasNoValuesField: a Manifest's Helm values are its config
// layer (spec.config), as in the public API; a values field is not part of
// the API, so strict field validation (kubectl's default) refuses it rather
// than the API server dropping it unseen.
func TestManifestHasNoValuesField(t *testing.T) {
	err := apiServer.Client.Create(t.Context(), manifestWith(t, "  remote: true\n  values: {replicas: 3}\n"),
		client.DryRunAll, client.FieldValidation("Strict"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "spec.values"`)
}
