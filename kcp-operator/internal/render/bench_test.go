package render_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// namespacedUnlessBuiltin stands in for a REST mapper: built-in kinds from
// the table, anything else namespaced.
func namespacedUnlessBuiltin(gvk schema.GroupVersionKind) (bool, error) {
	if ns, err := render.BuiltinScope(gvk); err == nil {
		return ns, nil
	}
	return true, nil
}

func benchmarkRender(b *testing.B, r *render.Renderer, req render.Request) {
	b.Helper()
	objs, err := r.Render(b.Context(), req, namespacedUnlessBuiltin)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Render(b.Context(), req, namespacedUnlessBuiltin); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(objs)), "objects")
}

// BenchmarkRenderCacheHit is an unchanged Manifest: the module (3 CRDs,
// a namespace, RBAC, a Deployment with its Service and ConfigMap) comes
// from the render cache as fresh copies.
func BenchmarkRenderCacheHit(b *testing.B) {
	req := rawRequest(nil)
	req.Install = render.Layer{Digest: "sha256:module", Data: rawModuleStream(b)}
	req.LocalizedImages = []string{"mirror.example.com/kyma-project/prod/keda-manager:1.6.0"}
	benchmarkRender(b, render.New(render.Options{}), req)
}

// BenchmarkRenderColdRawManifests renders the same module from its tar
// every time: parse, label, default namespaces, rewrite images, sort.
func BenchmarkRenderColdRawManifests(b *testing.B) {
	tarred, err := render.TarManifests(rawModuleFiles(b))
	require.NoError(b, err)
	req := rawRequest(tarred)
	req.LocalizedImages = []string{"mirror.example.com/kyma-project/prod/keda-manager:1.6.0"}
	benchmarkRender(b, render.New(render.Options{CacheEntries: -1}), req)
}

// BenchmarkRenderColdHelmChart renders the test chart every time: load the
// .tgz, merge values, run the templates, parse and transform.
func BenchmarkRenderColdHelmChart(b *testing.B) {
	req := chartRequest(packChart(b, "testdata/chart/keda"))
	req.Config = &render.Layer{Data: []byte("replicas: 2\n")}
	benchmarkRender(b, render.New(render.Options{CacheEntries: -1}), req)
}
