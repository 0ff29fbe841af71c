package render_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// loader serves a layer by digest and counts the loads, as the Manifest
// controller's fetch would.
type loader struct {
	data  []byte
	loads atomic.Int32
	fail  atomic.Bool
}

func (l *loader) layer(digest string) render.Layer {
	return render.Layer{Digest: digest, Load: func(context.Context) ([]byte, error) {
		l.loads.Add(1)
		if l.fail.Load() {
			return nil, errors.New("registry unreachable")
		}
		return l.data, nil
	}}
}

func TestRenderCacheHitLoadsNothingAndReturnsCopies(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, err := render.NewMetrics(reg)
	require.NoError(t, err)
	r := render.New(render.Options{Metrics: metrics})
	src := &loader{data: rawModuleStream(t)}
	req := rawRequest(nil)
	req.Install = src.layer("sha256:module-1.6.0")

	first, err := r.Render(t.Context(), req, nil)
	require.NoError(t, err)
	first[0].SetName("changed by the caller")
	first[0].GetLabels()["x"] = "y"

	second, err := r.Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 1, src.loads.Load(), "a hit loads no layer")
	assert.Equal(t, "kedas.operator.kyma-project.io", second[0].GetName(), "the cache holds its own copy")
	assert.NotContains(t, second[0].GetLabels(), "x")
	assert.Equal(t, 1, r.Len())
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lifecycle_manager_renders_total Module renders asked for, by result: hit (from the render cache), miss (rendered), error.
# TYPE lifecycle_manager_renders_total counter
lifecycle_manager_renders_total{result="hit"} 1
lifecycle_manager_renders_total{result="miss"} 1
`), "lifecycle_manager_renders_total"))
}

func TestRenderCacheKeyCoversEveryInput(t *testing.T) {
	r := render.New(render.Options{})
	chart := &loader{data: packChart(t, "testdata/chart/keda")}
	base := render.Request{Module: "keda", Namespace: "kyma-system", Type: render.HelmChart, Install: chart.layer("sha256:chart")}
	variants := map[string]func(*render.Request){
		"namespace":        func(r *render.Request) { r.Namespace = "other" },
		"module":           func(r *render.Request) { r.Module = "keda2" },
		"install digest":   func(r *render.Request) { r.Install = chart.layer("sha256:chart2") },
		"config digest":    func(r *render.Request) { r.Config = &render.Layer{Digest: "sha256:cfg", Data: []byte("replicas: 2")} },
		"values":           func(r *render.Request) { r.Values = map[string]any{"replicas": 4} },
		"release":          func(r *render.Request) { r.ReleaseName = "other" },
		"kube version":     func(r *render.Request) { r.KubeVersion = "v1.31.0" },
		"localized images": func(r *render.Request) { r.LocalizedImages = []string{"mirror.example.com/keda-manager:1"} },
	}
	_, err := r.Render(t.Context(), base, nil)
	require.NoError(t, err)
	loads := chart.loads.Load()
	for name, change := range variants {
		req := base
		change(&req)
		_, err := r.Render(t.Context(), req, nil)
		require.NoError(t, err, name)
		assert.Equal(t, loads+1, chart.loads.Load(), "%s is part of the key", name)
		loads = chart.loads.Load()
	}

	raw := &loader{data: rawModuleStream(t)}
	rawReq := rawRequest(nil)
	rawReq.Install = raw.layer("sha256:raw")
	_, err = r.Render(t.Context(), rawReq, nil)
	require.NoError(t, err)
	rawReq.Values = map[string]any{"ignored": true}
	rawReq.Config = &render.Layer{Digest: "sha256:cfg"}
	_, err = r.Render(t.Context(), rawReq, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 1, raw.loads.Load(), "values do not apply to raw manifests, so they do not split the cache")
}

func TestRenderCacheIsBounded(t *testing.T) {
	r := render.New(render.Options{CacheEntries: 2})
	src := &loader{data: rawModuleStream(t)}
	render1 := func(digest string) {
		t.Helper()
		req := rawRequest(nil)
		req.Install = src.layer(digest)
		_, err := r.Render(t.Context(), req, nil)
		require.NoError(t, err)
	}
	render1("sha256:a")
	render1("sha256:b")
	render1("sha256:a") // a is more recent than b
	render1("sha256:c") // b goes
	assert.Equal(t, 2, r.Len())
	assert.EqualValues(t, 3, src.loads.Load())
	render1("sha256:a")
	assert.EqualValues(t, 3, src.loads.Load())
	render1("sha256:b")
	assert.EqualValues(t, 4, src.loads.Load())

	tiny := render.New(render.Options{CacheBytes: 100})
	req := rawRequest(nil)
	req.Install = src.layer("sha256:a")
	_, err := tiny.Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Zero(t, tiny.Len(), "a render larger than the byte bound is not cached")

	off := render.New(render.Options{CacheEntries: -1})
	_, err = off.Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Zero(t, off.Len())
}

func TestFailedRendersAreNotCached(t *testing.T) {
	r := render.New(render.Options{})
	src := &loader{data: rawModuleStream(t)}
	src.fail.Store(true)
	req := rawRequest(nil)
	req.Install = src.layer("sha256:a")
	_, err := r.Render(t.Context(), req, nil)
	assert.ErrorContains(t, err, "loading the install layer sha256:a: registry unreachable")
	src.fail.Store(false)
	_, err = r.Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 2, src.loads.Load())
}

func TestConcurrentRendersOfOneModuleRenderOnce(t *testing.T) {
	r := render.New(render.Options{})
	src := &loader{data: rawModuleStream(t)}
	req := rawRequest(nil)
	req.Install = src.layer("sha256:a")
	var wg sync.WaitGroup
	results := make(chan int, 16)
	for range 16 {
		wg.Go(func() {
			objs, err := r.Render(context.Background(), req, nil)
			if err != nil {
				results <- -1
				return
			}
			objs[0].SetName("mine") // every caller owns its objects
			results <- len(objs)
		})
	}
	wg.Wait()
	close(results)
	for n := range results {
		assert.Equal(t, 12, n)
	}
	assert.EqualValues(t, 1, src.loads.Load())
}
