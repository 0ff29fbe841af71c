package chart_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join("..", "..", "..", "charts", "skr-agent")

// render renders the chart as the KCP operator does: the Helm library,
// release name skr-agent, into namespace.
func render(values map[string]any, namespace string) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart: %w", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	vals, err := chartutil.ToRenderValues(ch, values,
		chartutil.ReleaseOptions{Name: "skr-agent", Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var objs []*unstructured.Unstructured
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return nil, fmt.Errorf("%s: %w\n%s", name, err, doc)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs, nil
}

// mustRender renders into kyma-system, where the agent runs in a runtime.
func mustRender(t *testing.T, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	objs, err := render(values, "kyma-system")
	require.NoError(t, err)
	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		require.NotContains(t, byKind, o.GetKind(), "one object per kind")
		byKind[o.GetKind()] = o
	}
	return byKind
}

// values returns representative values: what the KCP operator sets.
func values(caPEM []byte, watchers ...map[string]any) map[string]any {
	ws := make([]any, 0, len(watchers))
	for _, w := range watchers {
		ws = append(ws, w)
	}
	return map[string]any{
		"image":     map[string]any{"repository": "registry.example.com/skr-agent", "tag": "1.2.3"},
		"runtimeID": "4f3a9c2e-1b7d-4c8a-9e6f-2d5b8a1c7e30",
		"kcp":       map[string]any{"address": "skr-events.kcp.example.com:443", "contract": "v2"},
		"tls":       map[string]any{"secretName": "skr-agent-tls", "caBundle": string(caPEM)},
		"watchers":  ws,
	}
}

func kymaWatcher() map[string]any {
	return map[string]any{
		"name": "klm-watcher", "manager": "lifecycle-manager", "field": "spec",
		"resourceToWatch": map[string]any{"group": "operator.kyma-project.io", "version": "v1beta2", "resource": "kymas"},
		"labelsToWatch":   map[string]any{"operator.kyma-project.io/watched-by": "lifecycle-manager"},
	}
}

func statusWatcher() map[string]any {
	return map[string]any{
		"name": "manifest-status", "manager": "manifest-controller", "field": "status",
		"resourceToWatch": map[string]any{"group": "operator.kyma-project.io", "version": "v1beta2", "resource": "manifests"},
	}
}

func set(values map[string]any, path string, v any) map[string]any {
	parts := strings.Split(path, ".")
	m := values
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
	return values
}

func field(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(o.Object, path...)
	require.NoError(t, err)
	require.True(t, found, "%s has no %s", o.GetKind(), strings.Join(path, "."))
	return v
}

func toYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	require.NoError(t, err)
	return string(bytes.TrimSpace(b))
}
