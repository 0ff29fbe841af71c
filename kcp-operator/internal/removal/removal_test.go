package removal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
)

const group = "removal.test.io"

// moduleLabels are the labels the render gives every object of the module "widgets".
var moduleLabels = map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "widgets"}

func nsRes(name string) shared.Resource {
	return shared.Resource{Name: name, GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"}}
}

func crdRes(name string) shared.Resource {
	return shared.Resource{Name: name, GroupVersionKind: metav1.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}}
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

func widget(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(group + "/v1")
	u.SetKind("Widget")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// reasons maps each kept resource's name to why it was kept.
func reasons(kept []removal.Kept) map[string]string {
	out := map[string]string{}
	for _, k := range kept {
		out[k.Name] = k.Reason
	}
	return out
}

func deleting(t *testing.T, c client.Client, obj client.Object) bool {
	t.Helper()
	err := c.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
	return apierrors.IsNotFound(err) || (err == nil && !obj.GetDeletionTimestamp().IsZero())
}

func TestDelete(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true, CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}})
	c := env.Client
	namespaces := map[string]*corev1.Namespace{}
	for _, name := range []string{"own", "found", "protected", "sync", "recreated"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		require.NoError(t, c.Create(t.Context(), ns))
		namespaces[name] = ns
	}
	crd := widgetCRD()
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(crd), crd))
	crd.Labels = moduleLabels
	require.NoError(t, c.Update(t.Context(), crd), "the module's CRD carries its labels")
	rules := removal.Rules{Protected: []string{"protected"}}
	module := removal.Module{Name: "widgets", SyncNamespace: "sync", Created: []v1beta2.CreatedResource{
		{Resource: nsRes("own"), UID: namespaces["own"].UID},
		{Resource: nsRes("protected"), UID: namespaces["protected"].UID},
		{Resource: nsRes("sync"), UID: namespaces["sync"].UID},
		{Resource: nsRes("recreated"), UID: "the-uid-of-an-earlier-namespace"},
	}}

	t.Run("namespaces", func(t *testing.T) {
		kept, err := rules.Delete(t.Context(), c, module,
			[]shared.Resource{nsRes("own"), nsRes("found"), nsRes("protected"), nsRes("sync"), nsRes("recreated")})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{
			"found":     "the module did not create it",
			"protected": "a protected namespace",
			"sync":      "a protected namespace",
			"recreated": "not the namespace the module created",
		}, reasons(kept))
		for _, k := range kept {
			assert.False(t, k.Pending, "the module lets go of %s", k.Name)
			assert.False(t, deleting(t, c, namespaces[k.Name]), "%s stays", k.Name)
		}
		assert.True(t, deleting(t, c, namespaces["own"]), "the namespace the module created goes")
	})

	t.Run("objects", func(t *testing.T) {
		labelled := func(name string, labels map[string]string) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "found", Name: name, Labels: labels}}
			require.NoError(t, c.Create(t.Context(), cm))
			return cm
		}
		ours := labelled("ours", moduleLabels)
		adopted := labelled("adopted", map[string]string{shared.ManagedByLabel: "public-lifecycle-manager"})
		users := labelled("users", nil)
		others := labelled("others", map[string]string{shared.ManagedByLabel: shared.OperatorName, shared.ModuleNameLabel: "other"})
		cmRes := func(name string) shared.Resource {
			return shared.Resource{Name: name, Namespace: "found", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
		}
		adopting := rules
		adopting.Adopt = []string{"public-lifecycle-manager"}
		kept, err := adopting.Delete(t.Context(), c, module,
			[]shared.Resource{cmRes("ours"), cmRes("adopted"), cmRes("users"), cmRes("others"), cmRes("never-made")})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{
			"users":  "it does not carry the module's labels",
			"others": "it does not carry the module's labels",
		}, reasons(kept), "a record never makes the module delete what is not its own")
		assert.True(t, deleting(t, c, ours))
		assert.True(t, deleting(t, c, adopted), "what the module adopts from counts as its own")
		assert.False(t, deleting(t, c, users), "a user's object stays")
		assert.False(t, deleting(t, c, others), "another module's object stays")
	})

	t.Run("CRDs", func(t *testing.T) {
		own := widget("found", "default")
		require.Eventually(t, func() bool { return c.Create(t.Context(), own.DeepCopy()) == nil }, 30*time.Second, 100*time.Millisecond, "the CRD serves")
		user := widget("found", "mine")
		require.NoError(t, c.Create(t.Context(), user))
		withOwn := module
		withOwn.OwnCR = own

		kept, err := rules.Delete(t.Context(), c, withOwn, []shared.Resource{crdRes("widgets." + group)})
		require.NoError(t, err)
		require.Len(t, kept, 1, "a user's CR keeps the CRD")
		assert.True(t, kept[0].Pending, "the module still holds the CRD")
		assert.Equal(t, "custom resources remain: Widget found/mine", kept[0].Reason)

		require.NoError(t, c.Delete(t.Context(), user))
		kept, err = rules.Delete(t.Context(), c, module, []shared.Resource{crdRes("widgets." + group)})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"widgets." + group: "custom resources remain: Widget found/default"}, reasons(kept),
			"with the policy Ignore the default CR is the user's")

		kept, err = rules.Delete(t.Context(), c, withOwn, []shared.Resource{crdRes("widgets." + group)})
		require.NoError(t, err)
		assert.Empty(t, kept, "the module's own CR is not user data")
		assert.True(t, deleting(t, c, widgetCRD()))
	})
}
