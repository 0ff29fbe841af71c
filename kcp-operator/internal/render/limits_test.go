package render_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// chartOf packs a chart with the given templates.
func chartOf(t testing.TB, name string, templates map[string]string) []byte {
	t.Helper()
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: " + name + "\nversion: 1.0.0\n"}
	for n, content := range templates {
		files["templates/"+n] = content
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for n, content := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name + "/" + n, Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(0, 0)}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// Charts that go over one bound each.
const (
	// bombTemplate is the chart of the issue: 272 bytes that rendered for
	// 12.7 s into 2.5 GiB.
	bombTemplate = "{{ range until 4000000 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-{{ . }}}\ndata: {a: b}\n{{ end }}\n"
	// spinTemplate renders nothing for minutes, in little memory: only a
	// render child that is killed stops it.
	spinTemplate = "{{ range until 20000 }}{{ range until 20000 }}{{ end }}{{ end }}\n"
	// shortSpinTemplate renders nothing for a few seconds: what an
	// abandoned render in process may run on for.
	shortSpinTemplate = "{{ range until 3000 }}{{ range until 3000 }}{{ end }}{{ end }}\n"
)

func configMaps(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\n", i)
	}
	return b.String()
}

func limitOf(t *testing.T, err error) *render.LimitError {
	t.Helper()
	var limit *render.LimitError
	require.True(t, errors.As(err, &limit), "a LimitError: %v", err)
	return limit
}

func TestRenderLimits(t *testing.T) {
	small := render.Limits{Timeout: 5 * time.Second, MaxBytes: 64 << 10, MaxObjects: 10}
	tests := []struct {
		name    string
		limits  render.Limits
		isolate bool
		req     render.Request
		want    render.Bound
		wantMsg string
	}{
		{name: "raw manifests over the bytes", limits: small, req: rawRequest([]byte(configMaps(2000))),
			want: render.BoundBytes, wantMsg: `render limit "bytes" of 65536 bytes exceeded: the manifests have`},
		{name: "gzip-compressed raw manifests that expand over the bytes", limits: small, req: rawRequest(gzipped(t, []byte(configMaps(2000)))),
			want: render.BoundBytes, wantMsg: "the gzip-compressed manifests expand further"},
		{name: "raw manifests over the objects", limits: small, req: rawRequest([]byte(configMaps(11))),
			want: render.BoundObjects, wantMsg: `render limit "objects" of 10 objects exceeded`},
		{name: "a List over the objects", limits: small,
			req:  rawRequest([]byte("apiVersion: v1\nkind: List\nitems:\n" + strings.Repeat("- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n", 11))),
			want: render.BoundObjects},
		{name: "a chart over the objects", limits: small,
			req:  chartRequest(chartOf(t, "many", map[string]string{"cm.yaml": "{{ range until 11 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-{{ . }}}\n{{ end }}"})),
			want: render.BoundObjects},
		{name: "a chart over the bytes", limits: small,
			req:  chartRequest(chartOf(t, "big", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {a: {{ repeat 70000 \"x\" }}}\n"})),
			want: render.BoundBytes, wantMsg: "chart big-1.0.0 renders"},
		{name: "an isolated chart over the bytes", limits: small, isolate: true,
			req:  chartRequest(chartOf(t, "big", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {a: {{ repeat 70000 \"x\" }}}\n"})),
			want: render.BoundBytes},
		{name: "a chart over the time", limits: render.Limits{Timeout: 200 * time.Millisecond},
			req: chartRequest(chartOf(t, "spin", map[string]string{"spin.yaml": shortSpinTemplate})), want: render.BoundTime,
			wantMsg: `render limit "time" of 200ms exceeded`},
		{name: "an isolated chart over the time", limits: render.Limits{Timeout: 500 * time.Millisecond}, isolate: true,
			req: chartRequest(chartOf(t, "spin", map[string]string{"spin.yaml": spinTemplate})), want: render.BoundTime},
		{name: "the bomb, isolated, over the memory", limits: render.Limits{MaxBytes: 1 << 20}, isolate: true,
			req: chartRequest(chartOf(t, "bomb", map[string]string{"bomb.yaml": bombTemplate})), want: render.BoundMemory,
			wantMsg: "the Helm engine used more memory and was killed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			metrics, err := render.NewMetrics(reg)
			require.NoError(t, err)
			r := render.New(render.Options{Limits: tc.limits, Isolate: tc.isolate, Metrics: metrics})
			_, err = r.Render(t.Context(), tc.req, nil)
			limit := limitOf(t, err)
			assert.Equal(t, tc.want, limit.Bound, err.Error())
			if tc.wantMsg != "" {
				assert.ErrorContains(t, err, tc.wantMsg)
			}
			assert.InDelta(t, 1, metricValue(t, reg, "lifecycle_manager_render_limits_exceeded_total", string(tc.want)), 0)
		})
	}
}

func TestIsolatedChartRendersAsInProcess(t *testing.T) {
	req := chartRequest(packChart(t, "testdata/chart/keda"))
	req.Config = &render.Layer{Data: []byte("replicas: 2\nlogging: {level: debug}\n")}
	req.Values = map[string]any{"replicas": 3, "extra": "from the Manifest"}
	inProcess, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	isolated, err := render.New(render.Options{Isolate: true}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Equal(t, inProcess, isolated)

	broken := chartRequest(chartOf(t, "broken", map[string]string{"a.yaml": "{{ fail \"no way\" }}"}))
	_, inErr := render.New(render.Options{}).Render(t.Context(), broken, nil)
	_, isoErr := render.New(render.Options{Isolate: true}).Render(t.Context(), broken, nil)
	require.Error(t, inErr)
	assert.EqualError(t, isoErr, inErr.Error(), "errors come back as they are")
	var doc *render.DocumentError
	assert.ErrorAs(t, isoErr, &doc)
}

func TestRenderOverALimitIsRemembered(t *testing.T) {
	r := render.New(render.Options{Limits: render.Limits{MaxObjects: 10}})
	src := &loader{data: []byte(configMaps(11))}
	req := rawRequest(nil)
	req.Install = src.layer("sha256:too-many")
	_, first := r.Render(t.Context(), req, nil)
	_ = limitOf(t, first) // asserts it is a limit error
	_, second := r.Render(t.Context(), req, nil)
	assert.Equal(t, first, second)
	assert.EqualValues(t, 1, src.loads.Load(), "the same module version renders the same: not loaded nor rendered again")

	src.fail.Store(true)
	req.Install = src.layer("sha256:unreachable")
	for range 2 {
		_, err := r.Render(t.Context(), req, nil)
		require.Error(t, err)
	}
	assert.EqualValues(t, 3, src.loads.Load(), "other failures are tried again")
}

// TestAbandonedRenderKeepsItsSlot: a chart abandoned at its deadline runs on
// in process; it holds its slot until it ends, so such renders cannot pile
// up, and the gauge shows it.
func TestAbandonedRenderKeepsItsSlot(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, err := render.NewMetrics(reg)
	require.NoError(t, err)
	r := render.New(render.Options{Concurrency: 1, Metrics: metrics, Limits: render.Limits{Timeout: 100 * time.Millisecond}})
	_, err = r.Render(t.Context(), chartRequest(chartOf(t, "spin", map[string]string{"spin.yaml": shortSpinTemplate})), nil)
	assert.Equal(t, render.BoundTime, limitOf(t, err).Bound)

	running := func() float64 {
		return metricValue(t, reg, "lifecycle_manager_renders_running", "")
	}
	assert.InDelta(t, 1, running(), 0, "the abandoned render still runs and holds the only slot")
	raw := rawRequest(rawModuleStream(t))
	_, err = r.Render(t.Context(), raw, nil)
	assert.ErrorContains(t, err, "no free render slot", "no second render while the abandoned one runs")
	require.Eventually(t, func() bool { return running() == 0 }, time.Minute, 50*time.Millisecond)
	_, err = r.Render(t.Context(), raw, nil)
	assert.NoError(t, err)
}

// metricValue reads a gauge, or a counter with the label value.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			switch {
			case label == "":
				return m.GetGauge().GetValue()
			case len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label:
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}
