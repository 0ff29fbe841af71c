package crdupgrade_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/kcp-operator/internal/crdupgrade"
)

// publicCRD is ours as the public lifecycle manager's older releases
// installed it: v1beta1 beside v1beta2 and, to begin with, the storage
// version.
func publicCRD(ours *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	c := ours.DeepCopy()
	c.Spec.Versions[0].Storage = false
	c.Spec.Versions = append([]apiextensionsv1.CustomResourceDefinitionVersion{{
		Name: "v1beta1", Served: true, Storage: true, Deprecated: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", XPreserveUnknownFields: ptr.To(true),
		}},
		Subresources: c.Spec.Versions[0].Subresources,
	}}, c.Spec.Versions...)
	return c
}

// TestAKCPOfThePublicOperatorIsUpgraded starts from the public CRDs with
// objects stored as v1beta1, then v1beta2 made the storage version (as the
// public operator's later releases did): storedVersions lists both, and
// our CRDs, which serve v1beta2 alone, cannot be applied as they are.
func TestAKCPOfThePublicOperatorIsUpgraded(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	ours, err := crd.ByKind("Kyma", "Manifest")
	require.NoError(t, err)
	c := env.Client

	for _, o := range ours {
		public := publicCRD(o)
		require.NoError(t, c.Create(t.Context(), public))
		waitEstablished(t, c, public.Name)
	}
	kymas := createStored(t, c, ours[0], "v1beta1", 3)
	manifests := createStored(t, c, ours[1], "v1beta1", 2)
	for _, o := range ours {
		have := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: o.Name}, have))
		have.Spec.Versions[0].Storage, have.Spec.Versions[1].Storage = false, true
		require.NoError(t, c.Update(t.Context(), have))
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: o.Name}, have))
		require.ElementsMatch(t, []string{"v1beta1", "v1beta2"}, have.Status.StoredVersions)

		// Why the upgrade exists: the API server refuses our CRD as it is.
		bare := o.DeepCopy()
		bare.ResourceVersion = have.ResourceVersion
		require.ErrorContains(t, c.Update(t.Context(), bare), "storedVersions", "dropping a stored version is refused")
	}

	results, err := crdupgrade.Upgrade(t.Context(), c, ours, testr.New(t))
	require.NoError(t, err)
	require.Len(t, results, 2)
	assert.Equal(t, 3, results[0].Migrated)
	assert.Equal(t, []string{"v1beta1"}, results[0].Dropped)

	for i, o := range ours {
		have := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: o.Name}, have))
		assert.Equal(t, []string{"v1beta2"}, have.Status.StoredVersions, o.Name)
		require.Len(t, have.Spec.Versions, 1, "only our version is left in %s", o.Name)
		assert.Equal(t, "v1beta2", have.Spec.Versions[0].Name)
		// Objects still stored as v1beta1 would not decode any more.
		for _, name := range [][]string{kymas, manifests}[i] {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: o.Spec.Group, Version: "v1beta2", Kind: o.Spec.Names.Kind})
			require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, obj))
		}
	}

	again, err := crdupgrade.Upgrade(t.Context(), c, ours, testr.New(t))
	require.NoError(t, err)
	assert.Zero(t, again[0].Migrated, "a second run has nothing to migrate")
}

// TestAFreshKCPGetsOurCRDs: no CRD installed yet, Upgrade installs ours.
func TestAFreshKCPGetsOurCRDs(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	all, err := crd.All()
	require.NoError(t, err)
	results, err := crdupgrade.Upgrade(t.Context(), env.Client, all, testr.New(t))
	require.NoError(t, err)
	require.Len(t, results, len(all))
	for _, o := range all {
		waitEstablished(t, env.Client, o.Name)
	}
}

// createStored creates n objects of the CRD's kind through version, which
// the API server stores in its storage version at that moment.
func createStored(t *testing.T, c client.Client, o *apiextensionsv1.CustomResourceDefinition, version string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"channel": "regular"}}}
		if o.Spec.Names.Kind == "Manifest" {
			obj.Object["spec"] = map[string]any{"remote": true, "version": "1.0.0", "install": map[string]any{"name": "raw-manifest",
				"source": map[string]any{"name": "kyma-project.io/module/keda", "repo": "registry.example.com/modules",
					"ref": "sha256:3b2c8a6ef0d7f1a25c6e4b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d", "type": "raw-manifest"}}}
		}
		obj.SetGroupVersionKind(schema.GroupVersionKind{Group: o.Spec.Group, Version: version, Kind: o.Spec.Names.Kind})
		obj.SetNamespace("default")
		obj.SetName(fmt.Sprintf("old-%d", i))
		require.NoError(t, c.Create(t.Context(), obj))
		names = append(names, obj.GetName())
	}
	return names
}

func waitEstablished(t *testing.T, c client.Client, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		have := &apiextensionsv1.CustomResourceDefinition{}
		if c.Get(t.Context(), client.ObjectKey{Name: name}, have) != nil {
			return false
		}
		for _, cond := range have.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	}, testTimeout, testTick)
}

const (
	testTimeout = 30 * time.Second
	testTick    = 50 * time.Millisecond
)
