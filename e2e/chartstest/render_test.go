package chartstest

import (
	"bytes"
	"fmt"
	"maps"
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

// repoRoot is the repository's root, seen from this package.
var repoRoot = filepath.Join("..", "..")

var chartDir = filepath.Join(repoRoot, "charts", "kcp-operator")

// releaseName is the release name of every render: the full name of the
// resources is then "kcp-operator".
const releaseName = "kcp-operator"

// render renders the chart as helm install does, into namespace.
func render(values map[string]any, namespace string) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart: %w", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	vals, err := chartutil.ToRenderValues(ch, values,
		chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering: %w", err)
	}
	names := slices.Sorted(maps.Keys(files))
	var objs []*unstructured.Unstructured
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for doc := range strings.SplitSeq(files[name], "\n---") {
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

// rendered holds the objects of one render, found by kind and name.
type rendered []*unstructured.Unstructured

func mustRender(t *testing.T, values map[string]any, namespace string) rendered {
	t.Helper()
	objs, err := render(values, namespace)
	require.NoError(t, err)
	return objs
}

// one returns the only object of kind (and name, when given).
func (r rendered) one(t *testing.T, kind string, name ...string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range r {
		if o.GetKind() == kind && (len(name) == 0 || o.GetName() == name[0]) {
			found = append(found, o)
		}
	}
	require.Len(t, found, 1, "%s %v in %v", kind, name, r.kinds())
	return found[0]
}

func (r rendered) all(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range r {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// kinds lists "Kind namespace/name" of every object, sorted.
func (r rendered) kinds() []string {
	out := make([]string, 0, len(r))
	for _, o := range r {
		out = append(out, fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName()))
	}
	slices.Sort(out)
	return out
}

// container returns the operator's container of the rendered Deployment.
func (r rendered) container(t *testing.T) map[string]any {
	t.Helper()
	cs := field(t, r.one(t, "Deployment"), "spec", "template", "spec", "containers").([]any)
	require.Len(t, cs, 1)
	return cs[0].(map[string]any)
}

// args returns the operator's flags as name → value.
func (r rendered) args(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range r.container(t)["args"].([]any) {
		name, value, _ := strings.Cut(a.(string), "=")
		require.NotContains(t, out, name, "flag given twice")
		out[name] = value
	}
	return out
}

// baseValues are the least a user sets: where agents send their events.
func baseValues() map[string]any {
	return map[string]any{
		"image": map[string]any{"repository": "registry.example.com/kcp-operator", "tag": "1.2.3"},
		"agent": map[string]any{
			"kcpAddress": "skr-events.kcp.example.com:443",
			"image":      map[string]any{"repository": "registry.example.com/skr-agent", "tag": "1.2.3"},
		},
	}
}

// certManagerValues switch to the cert-manager backend with the chart's own CA.
func certManagerValues() map[string]any {
	return set(baseValues(), "certificates.backend", "cert-manager")
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
	require.True(t, found, "%s %s has no %s", o.GetKind(), o.GetName(), strings.Join(path, "."))
	return v
}

func toYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	require.NoError(t, err)
	return string(bytes.TrimSpace(b))
}
