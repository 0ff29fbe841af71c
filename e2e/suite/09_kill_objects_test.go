package suite

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// What a runtime's user owns; the operator must never delete any of it.
const (
	userNamespace = "kill-user"
	userGroup     = "kill.example.com"
)

var userGVK = schema.GroupVersionKind{Group: userGroup, Version: "v1", Kind: "Widget"}

// userObjects are the UIDs of a user's objects, to tell them from copies.
type userObjects map[string]types.UID

// createUserObjects creates, or finds from an earlier run, a namespace
// with a ConfigMap, a CRD and a CR of it.
func createUserObjects(t *testing.T, rt *harness.Runtime) userObjects {
	t.Helper()
	preserve := true
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNamespace}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: userNamespace},
		Data: map[string]string{"mine": "yes"}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + userGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: userGroup, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	for _, obj := range []client.Object{ns, cm, crd} {
		require.NoError(t, client.IgnoreAlreadyExists(rt.Client.Create(t.Context(), obj)), "%s: creating %T", rt.Name, obj)
	}
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(userGVK)
	cr.SetNamespace(userNamespace)
	cr.SetName("mine")
	cr.Object["spec"] = map[string]any{"size": int64(3)}
	// The API server serves a new CRD's kind a moment after it is created.
	require.Eventually(t, func() bool {
		err := rt.Client.Create(t.Context(), cr.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err)
	}, timeout, tick, "%s: creating the user's Widget", rt.Name)
	out := userObjects{}
	for key, obj := range userObjectKeys() {
		got := key.object()
		require.NoError(t, rt.Client.Get(t.Context(), obj, got), "%s: reading the user's %s", rt.Name, key)
		out[string(key)] = got.GetUID()
	}
	return out
}

// assertIntact checks that every user object is there, the same object
// (same UID), and not being deleted.
func (u userObjects) assertIntact(t *testing.T, rt *harness.Runtime) {
	t.Helper()
	for key, obj := range userObjectKeys() {
		got := key.object()
		if err := rt.Client.Get(t.Context(), obj, got); err != nil {
			assert.NoError(t, err, "%s: the user's %s", rt.Name, key)
			continue
		}
		assert.Equal(t, u[string(key)], got.GetUID(), "%s: the user's %s is the one the user made", rt.Name, key)
		assert.Nil(t, got.GetDeletionTimestamp(), "%s: the user's %s is not being deleted", rt.Name, key)
	}
}

// userKind names one user object by its kind.
type userKind string

func (k userKind) object() client.Object {
	switch k {
	case "Namespace":
		return &corev1.Namespace{}
	case "ConfigMap":
		return &corev1.ConfigMap{}
	case "CustomResourceDefinition":
		return &apiextensionsv1.CustomResourceDefinition{}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(userGVK)
	return u
}

func userObjectKeys() map[userKind]client.ObjectKey {
	return map[userKind]client.ObjectKey{
		"Namespace":                {Name: userNamespace},
		"ConfigMap":                {Namespace: userNamespace, Name: "settings"},
		"CustomResourceDefinition": {Name: "widgets." + userGroup},
		"Widget":                   {Namespace: userNamespace, Name: "mine"},
	}
}

// moduleObjects lists every object in the runtime that carries the
// module's label, of every kind the API server serves, except the module
// catalog (ModuleTemplates and release metas stay while the module is
// offered) and Kymas.
func moduleObjects(t *testing.T, rt *harness.Runtime, module string) []string {
	t.Helper()
	// Listing every kind lists deprecated ones (v1 Endpoints): no warnings.
	cfg := rest.CopyConfig(rt.Config)
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{Scheme: rt.Client.Scheme()})
	require.NoError(t, err)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	lists, err := dc.ServerPreferredResources()
	require.NoError(t, err, "%s: discovering the served kinds", rt.Name)
	var found []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		require.NoError(t, err)
		if gv.Group == v1beta2.GroupVersion.Group {
			continue
		}
		for _, res := range list.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") {
				continue
			}
			objs := &metav1.PartialObjectMetadataList{}
			objs.SetGroupVersionKind(gv.WithKind(res.Kind + "List"))
			err := c.List(t.Context(), objs, client.MatchingLabels{shared.ModuleNameLabel: module})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue // a kind gone since discovery (the module's CRD)
			}
			require.NoError(t, err, "%s: listing %s", rt.Name, res.Name)
			for _, o := range objs.Items {
				name := res.Kind + " " + o.Name
				if o.Namespace != "" {
					name = res.Kind + " " + o.Namespace + "/" + o.Name
				}
				found = append(found, name)
			}
		}
	}
	return found
}
