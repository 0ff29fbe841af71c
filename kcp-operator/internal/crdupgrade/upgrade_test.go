package crdupgrade_test

import (
	"fmt"
	"slices"
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
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/kcp-operator/internal/conversion"
	"github.com/lifecycle-manager/kcp-operator/internal/crdupgrade"
)

// publicCRD is ours as the public lifecycle manager's older releases
// installed it: its own v1beta1, served without a webhook, beside v1beta2
// and, to begin with, the storage version.
func publicCRD(ours *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	c := ours.DeepCopy()
	i := slices.IndexFunc(c.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1beta2" })
	v1beta2 := c.Spec.Versions[i]
	v1beta2.Storage = false
	c.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{{
		Name: "v1beta1", Served: true, Storage: true, Deprecated: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", XPreserveUnknownFields: ptr.To(true),
		}},
		Subresources: v1beta2.Subresources,
	}, v1beta2}
	c.Spec.Conversion = nil
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
	}

	// Our CRDs serve v1beta1 too, through a webhook that is not running
	// (it does not during the hook): objects left stored as v1beta1 could
	// not be read as v1beta2 any more, so they are migrated all the same.
	target, err := conversion.ParseTarget("https://127.0.0.1:1/convert")
	require.NoError(t, err)
	conversion.Configure(ours, target)
	results, err := crdupgrade.Upgrade(t.Context(), c, ours, testr.New(t))
	require.NoError(t, err)
	require.Len(t, results, 2)
	assert.Equal(t, 3, results[0].Migrated)
	assert.Equal(t, []string{"v1beta1"}, results[0].Dropped)

	for i, o := range ours {
		have := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: o.Name}, have))
		assert.Equal(t, []string{"v1beta2"}, have.Status.StoredVersions, o.Name)
		assert.Equal(t, map[string]bool{"v1beta1": true, "v1beta2": true}, served(have), "our versions are left in %s", o.Name)
		// Objects still stored as v1beta1 would need the webhook for this.
		for _, name := range [][]string{kymas, manifests}[i] {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: o.Spec.Group, Version: "v1beta2", Kind: o.Spec.Names.Kind})
			require.NoError(t, c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, obj))
		}
	}

	plain, err := crd.ByKind("Kyma", "Manifest")
	require.NoError(t, err)
	again, err := crdupgrade.Upgrade(t.Context(), c, plain, testr.New(t))
	require.NoError(t, err)
	assert.Zero(t, again[0].Migrated, "a second run has nothing to migrate")
	for _, o := range plain {
		have := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, c.Get(t.Context(), client.ObjectKey{Name: o.Name}, have))
		assert.Equal(t, map[string]bool{"v1beta1": false, "v1beta2": true}, served(have), "v1beta1 unserved without the webhook")
	}
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

// TestTheHookTurnsTheConversionWebhookOnAndOff: with --webhook-* flags the
// hook serves v1beta1 and points the conversion at the webhook; applying
// again keeps the caBundle the operator wrote; without the flags the
// conversion is None again and v1beta1 unserved.
func TestTheHookTurnsTheConversionWebhookOnAndOff(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	target, err := conversion.ParseTarget("kcp-system/kcp-operator-webhook")
	require.NoError(t, err)
	withWebhook := func() []*apiextensionsv1.CustomResourceDefinition {
		all, err := crd.All()
		require.NoError(t, err)
		conversion.Configure(all, target)
		return all
	}
	_, err = crdupgrade.Upgrade(t.Context(), env.Client, withWebhook(), testr.New(t))
	require.NoError(t, err)
	kymas := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Name: "kymas.operator.kyma-project.io"}, kymas))
	assert.Equal(t, map[string]bool{"v1beta1": true, "v1beta2": true}, served(kymas))
	require.Equal(t, apiextensionsv1.WebhookConverter, kymas.Spec.Conversion.Strategy)
	assert.True(t, target.Calls(kymas.Spec.Conversion.Webhook.ClientConfig))

	// The operator's Keeper writes the caBundle as its own field manager.
	patch := client.MergeFrom(kymas.DeepCopy())
	bundle := caPEM(t)
	kymas.Spec.Conversion.Webhook.ClientConfig.CABundle = bundle
	require.NoError(t, env.Client.Patch(t.Context(), kymas, patch, client.FieldOwner(conversion.FieldOwner)))
	_, err = crdupgrade.Upgrade(t.Context(), env.Client, withWebhook(), testr.New(t))
	require.NoError(t, err)
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Name: kymas.Name}, kymas))
	assert.Equal(t, bundle, kymas.Spec.Conversion.Webhook.ClientConfig.CABundle, "a helm upgrade keeps the caBundle")

	plain, err := crd.All()
	require.NoError(t, err)
	_, err = crdupgrade.Upgrade(t.Context(), env.Client, plain, testr.New(t))
	require.NoError(t, err, "turning the webhook off")
	require.NoError(t, env.Client.Get(t.Context(), client.ObjectKey{Name: kymas.Name}, kymas))
	assert.Equal(t, apiextensionsv1.NoneConverter, kymas.Spec.Conversion.Strategy)
	assert.Equal(t, map[string]bool{"v1beta1": false, "v1beta2": true}, served(kymas))
}

func caPEM(t *testing.T) []byte {
	t.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	require.NoError(t, err)
	ca, err := pki.NewCA("test CA", key, time.Now(), time.Hour)
	require.NoError(t, err)
	return pki.EncodeCerts(ca.Cert)
}

func served(c *apiextensionsv1.CustomResourceDefinition) map[string]bool {
	out := map[string]bool{}
	for _, v := range c.Spec.Versions {
		out[v.Name] = v.Served
	}
	return out
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
