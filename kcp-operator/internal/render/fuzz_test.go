package render_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// FuzzParseManifests feeds the raw manifest parser, and the whole render
// pipeline, anything. The seeds are small on purpose: the fuzzer minimises
// every interesting input, and large ones take its whole time budget.
func FuzzParseManifests(f *testing.F) {
	small := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m, labels: {a: b}}\n" +
		"spec: {template: {spec: {containers: [{name: c, image: r.io/x/keda-manager:1}]}}}\n"
	tarred, err := render.TarManifests(map[string][]byte{"a.yaml": []byte(small), "b/c.json": []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`)})
	require.NoError(f, err)
	f.Add([]byte(small))
	f.Add(tarred)
	f.Add(gzipped(f, []byte(small)))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"))
	f.Add([]byte("---\n# comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: x}\n"))
	f.Add([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: as.b.io}\n" +
		"spec: {group: b.io, scope: Cluster, names: {kind: A, plural: as}}\n---\napiVersion: b.io/v1\nkind: A\nmetadata: {name: a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := render.ParseManifests(data)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				t.Fatalf("parsed an object without apiVersion, kind or name: %v", o.Object)
			}
			_ = o.DeepCopy() // panics on values that are not JSON
		}
		// The whole pipeline must not panic either.
		req := rawRequest(data)
		req.LocalizedImages = []string{"mirror.example.com/keda-manager:1", "mirror.example.com/nginx"}
		_, _ = render.New(render.Options{CacheEntries: -1}).Render(t.Context(), req, namespacedUnlessBuiltin)
	})
}
