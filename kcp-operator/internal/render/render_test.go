package render_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

const defaultCR = `
---
apiVersion: operator.kyma-project.io/v1beta1
kind: Keda
metadata:
  name: default
spec:
  logging: debug
`

func rawRequest(data []byte) render.Request {
	return render.Request{Module: "keda", Namespace: "kyma-system", Type: render.RawManifest, Install: render.Layer{Data: data}}
}

func TestRenderRawManifests(t *testing.T) {
	scope := &recordingScope{}
	objs, err := render.New(render.Options{}).Render(t.Context(), rawRequest(append(rawModuleStream(t), defaultCR...)), scope.scope)
	require.NoError(t, err)

	assert.Equal(t, []string{
		"CustomResourceDefinition kedas.operator.kyma-project.io",
		"CustomResourceDefinition scaledobjects.keda.sh",
		"CustomResourceDefinition clustertriggerauthentications.keda.sh",
		"Namespace keda-system",
		"ClusterRole keda-manager",
		"ClusterRoleBinding keda-manager",
		"ServiceAccount kyma-system/keda-manager",
		"Role kyma-system/keda-manager-leader-election",
		"RoleBinding kyma-system/keda-manager-leader-election",
		"ConfigMap kyma-system/keda-manager-config",
		"Service kyma-system/keda-manager-metrics",
		"Deployment kyma-system/keda-manager",
		"Keda kyma-system/default",
	}, ids(objs), "CRDs, namespaces, cluster-scoped, then namespaced objects, in file order within each group; "+
		"the namespace templated onto the ClusterRole is removed")

	for _, o := range objs {
		assert.Equal(t, shared.OperatorName, o.GetLabels()[shared.ManagedByLabel], o.GetName())
		assert.Equal(t, "keda", o.GetLabels()[shared.ModuleNameLabel], o.GetName())
	}
	assert.Equal(t, "disabled", find(t, objs, "Namespace", "keda-system").GetLabels()["istio-injection"], "existing labels stay")
	replicas, found, err := unstructured.NestedInt64(find(t, objs, "Deployment", "keda-manager").Object, "spec", "replicas")
	require.NoError(t, err, "integers stay int64")
	assert.True(t, found)
	assert.Equal(t, int64(1), replicas)
	assert.NotContains(t, scope.asked, schema.GroupKind{Group: "operator.kyma-project.io", Kind: "Keda"},
		"a kind defined by a CRD of the module is not asked")
}

func TestRenderRawManifestsFromArchives(t *testing.T) {
	files := rawModuleFiles(t)
	files["docs/README.md"] = []byte("not a manifest")
	files["._00-crds.yaml"] = []byte("\x00\x01 macOS metadata")
	tarred := packFiles(t, files)
	stream, err := render.New(render.Options{}).Render(t.Context(), rawRequest(rawModuleStream(t)), nil)
	require.NoError(t, err)

	for name, data := range map[string][]byte{"tar": tarred, "tar.gz": gzipped(t, tarred), "yaml.gz": gzipped(t, rawModuleStream(t))} {
		t.Run(name, func(t *testing.T) {
			objs, err := render.New(render.Options{}).Render(t.Context(), rawRequest(data), nil)
			require.NoError(t, err)
			assert.Equal(t, stream, objs, "the same objects as the YAML stream")
		})
	}
}

// packFiles packs files as other tools might: in reverse name order, with
// a directory entry, and all files, manifests or not.
func packFiles(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "docs/", Typeflag: tar.TypeDir, Mode: 0o755}))
	for _, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n]))}))
		_, err := tw.Write(files[n])
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func TestTarManifests(t *testing.T) {
	files := map[string][]byte{"b.yaml": []byte("kind: B"), "a/c.yml": []byte("kind: C")}
	first, err := render.TarManifests(files)
	require.NoError(t, err)
	second, err := render.TarManifests(files)
	require.NoError(t, err)
	assert.Equal(t, first, second, "packing is reproducible")
	_, err = render.TarManifests(map[string][]byte{"notes.txt": nil})
	assert.ErrorContains(t, err, "notes.txt: only .yaml")
}

func TestRenderRejectsBadManifests(t *testing.T) {
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: manager}\n"
	tarWithBadFile, err := render.TarManifests(map[string][]byte{"a.yaml": []byte(deployment), "b/bad.yaml": []byte("kind: [")})
	require.NoError(t, err)
	tests := []struct {
		name    string
		data    []byte
		wantErr []string
	}{
		{"bad YAML", []byte(deployment + "---\nkind: [\n"), []string{"document 2", "invalid YAML"}},
		{"no kind", []byte("apiVersion: v1\nmetadata: {name: a}\n"), []string{"document 1", "kind is missing"}},
		{"no apiVersion", []byte("kind: ConfigMap\nmetadata: {name: cfg}\n"), []string{"document 1 (ConfigMap cfg)", "apiVersion is missing"}},
		{"no name", []byte(deployment + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: x}\n"), []string{"document 2", "metadata.name is missing"}},
		{"no metadata", []byte("apiVersion: v1\nkind: ConfigMap\n"), []string{"metadata is missing"}},
		{"not an object", []byte("- a\n- b\n"), []string{"must be an object"}},
		{"labels not strings", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {a: [1]}}\n"), []string{"(ConfigMap a)", "metadata.labels"}},
		{"bad List item", []byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {kind: Secret}\n"), []string{"item 1 of the List", "apiVersion is missing"}},
		{"bad file in tar", tarWithBadFile, []string{"b/bad.yaml, document 1", "invalid YAML"}},
		{"corrupt gzip", []byte{0x1f, 0x8b, 0x08, 0x00, 0x01}, []string{"reading gzip"}},
		{"duplicate object", []byte(deployment + "---\n" + deployment), []string{"document 2 (Deployment kyma-system/manager)", "already defined in document 1"}},
		{"malformed CRD", []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b.io}\nspec: {group: b.io, names: {kind: A, plural: as}}\n"),
			[]string{"(CustomResourceDefinition a.b.io)", `spec.scope "" is neither`}},
		{"kind of unknown scope", []byte("apiVersion: other.io/v1\nkind: Thing\nmetadata: {name: a}\n"), []string{"(Thing a)", "no matches for kind"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scope := &recordingScope{}
			_, err := render.New(render.Options{}).Render(t.Context(), rawRequest(tc.data), scope.scope)
			require.Error(t, err)
			var docErr *render.DocumentError
			assert.True(t, errors.As(err, &docErr), "a DocumentError: %v", err)
			for _, want := range tc.wantErr {
				assert.ErrorContains(t, err, want)
			}
		})
	}
	var noMatch *noKindMatch
	_, err = render.New(render.Options{}).Render(t.Context(), rawRequest([]byte("apiVersion: other.io/v1\nkind: Thing\nmetadata: {name: a}\n")), (&recordingScope{}).scope)
	assert.ErrorAs(t, err, &noMatch, "the scope function's error is wrapped, so callers can tell a missing CRD")
}

func TestRenderRequestChecks(t *testing.T) {
	tests := map[string]struct {
		req     render.Request
		wantErr string
	}{
		"no module":    {render.Request{Namespace: "n", Type: render.RawManifest, Install: render.Layer{Data: []byte{}}}, "needs a module"},
		"no namespace": {render.Request{Module: "m", Type: render.RawManifest, Install: render.Layer{Data: []byte{}}}, "needs a module and a namespace"},
		"bad type":     {render.Request{Module: "m", Namespace: "n", Type: "kustomize", Install: render.Layer{Data: []byte{}}}, `"kustomize" is neither`},
		"no content":   {render.Request{Module: "m", Namespace: "n", Type: render.RawManifest}, "neither data nor a digest"},
		"no loader":    {render.Request{Module: "m", Namespace: "n", Type: render.RawManifest, Install: render.Layer{Digest: "sha256:1"}}, "neither data nor a loader"},
		"bad localized image": {render.Request{Module: "m", Namespace: "n", Type: render.RawManifest, Install: render.Layer{Data: []byte{}},
			LocalizedImages: []string{"mirror.example.com/"}}, "is not an image reference"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := render.New(render.Options{}).Render(t.Context(), tc.req, nil)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestDefinedKindsAndSorting(t *testing.T) {
	objs, err := render.ParseManifests(rawModuleStream(t))
	require.NoError(t, err)
	kinds, err := render.DefinedKinds(objs)
	require.NoError(t, err)
	require.Len(t, kinds, 3)
	assert.Equal(t, render.DefinedKind{
		GroupKind: schema.GroupKind{Group: "operator.kyma-project.io", Kind: "Keda"},
		CRD:       "kedas.operator.kyma-project.io", Plural: "kedas", Namespaced: true,
		Versions: []string{"v1beta1", "v1alpha1"},
	}, kinds[0], "the storage version first")
	assert.False(t, kinds[2].Namespaced)
	assert.True(t, render.IsCRD(objs[0]))
	assert.False(t, render.IsCRD(objs[3]))

	_, err = render.DefinedKinds([]*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "x"},
		"spec": map[string]any{"group": "b.io", "scope": "Cluster", "names": map[string]any{"kind": "X"}},
	}}})
	assert.ErrorContains(t, err, "CustomResourceDefinition x: spec.names.plural is missing")

	mixed := []*unstructured.Unstructured{obj("v1", "ConfigMap", "ns", "a"), obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "b"),
		obj("v1", "Namespace", "", "c"), obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "d"), obj("v1", "Secret", "ns", "e"),
		obj("v1", "Namespace", "", "f")}
	render.SortForApply(mixed)
	assert.Equal(t, []string{"CustomResourceDefinition d", "Namespace c", "Namespace f", "ClusterRole b", "ConfigMap ns/a", "Secret ns/e"}, ids(mixed))
}

func obj(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func TestBuiltinScope(t *testing.T) {
	tests := []struct {
		gvk        schema.GroupVersionKind
		namespaced bool
		wantErr    string
	}{
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, namespaced: true},
		{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}},
		{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, namespaced: true},
		{gvk: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}},
		{gvk: schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}},
		{gvk: schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}, wantErr: "no CRD in the module defines it"},
	}
	for _, tc := range tests {
		namespaced, err := render.BuiltinScope(tc.gvk)
		if tc.wantErr != "" {
			assert.ErrorContains(t, err, tc.wantErr)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.namespaced, namespaced, tc.gvk.String())
	}
}
