package render

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// DefaultKubeVersion is the Kubernetes version charts see in
// .Capabilities.KubeVersion when the Request names none.
const DefaultKubeVersion = "v1.35.0"

const hookAnnotation = "helm.sh/hook"

// installHooks are the hook events that happen when a release is installed
// or upgraded; hooks for them are kept as ordinary resources.
var installHooks = map[string]bool{"pre-install": true, "post-install": true, "pre-upgrade": true, "post-upgrade": true}

// renderChart renders a chart .tgz the way `helm template` does without a
// cluster: CRDs of crds/ (of the chart and its enabled subcharts) first,
// then the templates in file-name order. There is no release: hooks do not
// run. A hook object for install or upgrade is kept as an ordinary resource
// (it is applied once and stays, with its annotations); hooks only for
// test, delete or rollback are dropped. lookup finds nothing.
func renderChart(data, config []byte, req *Request) ([]parsedObject, error) {
	chrt, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, &DocumentError{Err: fmt.Errorf("loading the Helm chart: %w", err)}
	}
	name := chrt.Name() + "-" + chrt.Metadata.Version
	fail := func(err error) ([]parsedObject, error) {
		return nil, &DocumentError{Source: "chart " + name, Err: err}
	}
	if chrt.Metadata.Type == "library" {
		return fail(errors.New("a library chart cannot be installed"))
	}
	values, err := chartValues(config, req.Values)
	if err != nil {
		return fail(err)
	}
	caps, err := capabilities(req.KubeVersion)
	if err != nil {
		return fail(err)
	}
	if kv := chrt.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return fail(fmt.Errorf("the chart needs Kubernetes %s, rendering for %s", kv, caps.KubeVersion.String()))
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, values); err != nil {
		return fail(fmt.Errorf("processing dependencies: %w", err))
	}
	release := chartutil.ReleaseOptions{Name: req.ReleaseName, Namespace: req.Namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(chrt, values, release, caps)
	if err != nil {
		return fail(fmt.Errorf("values: %w", err))
	}
	files, err := new(engine.Engine).Render(chrt, top)
	if err != nil {
		return fail(fmt.Errorf("rendering: %w", err))
	}
	out, err := chartCRDs(chrt)
	if err != nil {
		return nil, err
	}
	templates, err := renderedObjects(files)
	if err != nil {
		return nil, err
	}
	return append(out, templates...), nil
}

func chartCRDs(chrt *chart.Chart) ([]parsedObject, error) {
	var out []parsedObject
	for _, crd := range chrt.CRDObjects() {
		objs, err := parseStream(crd.File.Data, crd.Filename)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func renderedObjects(files map[string]string) ([]parsedObject, error) {
	names := make([]string, 0, len(files))
	for name, content := range files {
		if path.Base(name) == "NOTES.txt" || strings.TrimSpace(content) == "" {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var out []parsedObject
	for _, name := range names {
		objs, err := parseStream([]byte(files[name]), name)
		if err != nil {
			return nil, err
		}
		for _, p := range objs {
			if keepHook(p.obj.GetAnnotations()[hookAnnotation]) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func keepHook(events string) bool {
	if events == "" {
		return true
	}
	for _, e := range strings.Split(events, ",") {
		if installHooks[strings.TrimSpace(e)] {
			return true
		}
	}
	return false
}

func capabilities(kubeVersion string) (*chartutil.Capabilities, error) {
	if kubeVersion == "" {
		kubeVersion = DefaultKubeVersion
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("kube version %q: %w", kubeVersion, err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	return caps, nil
}

// chartValues merges the config layer's values and the request's values;
// the chart's defaults go under both when the values are rendered.
func chartValues(config []byte, values map[string]any) (map[string]any, error) {
	base := map[string]any{}
	if len(bytes.TrimSpace(config)) > 0 {
		parsed, err := chartutil.ReadValues(config)
		if err != nil {
			return nil, fmt.Errorf("config layer is not a YAML map of values: %w", err)
		}
		base = parsed
	}
	return mergeValues(base, values), nil
}

// mergeValues returns base with over laid on top: maps merge key by key,
// anything else in over replaces. Neither input is changed.
func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if sub, ok := v.(map[string]any); ok {
			if baseSub, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(baseSub, sub)
				continue
			}
		}
		out[k] = v
	}
	return out
}
