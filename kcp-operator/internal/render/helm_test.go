package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

func chartRequest(chart []byte) render.Request {
	return render.Request{Module: "keda", Namespace: "kyma-system", Type: render.HelmChart, Install: render.Layer{Data: chart}}
}

func TestRenderHelmChart(t *testing.T) {
	req := chartRequest(packChart(t, "testdata/chart/keda"))
	req.ReleaseName = "keda-release"
	req.Config = &render.Layer{Data: []byte("replicas: 2\nlogging: {level: debug}\nimage: {tag: 1.6.1}\n")}
	req.Values = map[string]any{"replicas": 3, "extra": "from the Manifest"}
	objs, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)

	assert.Equal(t, []string{
		"CustomResourceDefinition scaledobjects.keda.sh",
		"ClusterRole keda-release-operator",
		"ConfigMap kyma-system/keda-release-config",
		"Deployment kyma-system/keda-release-operator",
		"Job kyma-system/keda-release-migrate",
		"ServiceAccount kyma-system/keda-release-operator",
	}, ids(objs), "crds/ first; the install hook kept, the test and delete hooks dropped; NOTES.txt skipped")

	deploy := find(t, objs, "Deployment", "keda-release-operator")
	replicas, _, err := unstructured.NestedInt64(deploy.Object, "spec", "replicas")
	require.NoError(t, err)
	assert.Equal(t, int64(3), replicas, "the Manifest's values win over the config layer")
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	container := containers[0].(map[string]any)
	assert.Equal(t, "europe-docker.pkg.dev/kyma-project/prod/keda-manager:1.6.1", container["image"],
		"the config layer wins over the chart's defaults, key by key")
	assert.Equal(t, []any{"--zap-log-level=debug", "--zap-encoder=json", "--modern-kube=true"}, container["args"],
		"chart defaults fill in the rest; Capabilities.KubeVersion is the default version")
	assert.Equal(t, "keda-release", deploy.GetLabels()["app.kubernetes.io/instance"])
	assert.Equal(t, "keda", deploy.GetLabels()[shared.ModuleNameLabel])
	assert.Equal(t, "from the Manifest", find(t, objs, "ConfigMap", "keda-release-config").Object["data"].(map[string]any)["extra"])
	assert.Equal(t, "pre-install,pre-upgrade", find(t, objs, "Job", "keda-release-migrate").GetAnnotations()["helm.sh/hook"])
}

func TestRenderHelmChartValuesCanSwitchTemplatesOff(t *testing.T) {
	req := chartRequest(packChart(t, "testdata/chart/keda"))
	req.Config = &render.Layer{Data: []byte("metricsServer: {enabled: false}\n")}
	objs, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.NotContains(t, ids(objs), "ConfigMap kyma-system/keda-config")
	assert.Contains(t, ids(objs), "Deployment kyma-system/keda-operator", "the release name defaults to the module")

	req.Type = render.RawManifest
	_, err = render.New(render.Options{}).Render(t.Context(), req, nil)
	assert.ErrorContains(t, err, "keda/Chart.yaml, document 1: kind is missing", "a chart is not a raw manifest")
}

func TestRenderHelmChartFailures(t *testing.T) {
	withFile := func(t *testing.T, name, content string) []byte {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "keda")
		require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/chart/keda")))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
		return packChart(t, dir)
	}
	tests := []struct {
		name    string
		chart   func(t *testing.T) []byte
		mutate  func(*render.Request)
		wantErr []string
	}{
		{name: "template fails", chart: func(t *testing.T) []byte {
			return withFile(t, "templates/fail.yaml", `{{ required "image.registry is required" .Values.image.registry }}`)
		}, wantErr: []string{"chart keda-1.6.0", "templates/fail.yaml", "image.registry is required"}},
		{name: "template renders bad YAML", chart: func(t *testing.T) []byte {
			return withFile(t, "templates/bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n")
		}, wantErr: []string{"keda/templates/bad.yaml, document 1", "invalid YAML"}},
		{name: "template without name", chart: func(t *testing.T) []byte {
			return withFile(t, "templates/noname.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
		}, wantErr: []string{"keda/templates/noname.yaml, document 1", "metadata.name is missing"}},
		{name: "kube version too old", chart: func(t *testing.T) []byte { return packChart(t, "testdata/chart/keda") },
			mutate: func(r *render.Request) { r.KubeVersion = "v1.27.3" }, wantErr: []string{"needs Kubernetes >=1.28.0-0, rendering for v1.27.3"}},
		{name: "bad kube version", chart: func(t *testing.T) []byte { return packChart(t, "testdata/chart/keda") },
			mutate: func(r *render.Request) { r.KubeVersion = "latest" }, wantErr: []string{`kube version "latest"`}},
		{name: "config not a map", chart: func(t *testing.T) []byte { return packChart(t, "testdata/chart/keda") },
			mutate: func(r *render.Request) { r.Config = &render.Layer{Data: []byte("- a\n")} }, wantErr: []string{"config layer is not a YAML map"}},
		{name: "library chart", chart: func(t *testing.T) []byte {
			return withFile(t, "Chart.yaml", "apiVersion: v2\nname: keda\nversion: 1.6.0\ntype: library\n")
		}, wantErr: []string{"a library chart cannot be installed"}},
		{name: "not a chart", chart: func(*testing.T) []byte { return gzipped(t, []byte("hello")) },
			wantErr: []string{"loading the Helm chart"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := chartRequest(tc.chart(t))
			if tc.mutate != nil {
				tc.mutate(&req)
			}
			_, err := render.New(render.Options{}).Render(t.Context(), req, nil)
			require.Error(t, err)
			for _, want := range tc.wantErr {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}
