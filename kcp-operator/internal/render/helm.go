package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DefaultKubeVersion is the Kubernetes version charts see in
// .Capabilities.KubeVersion when the Request names none.
const DefaultKubeVersion = "v1.35.0"

const hookAnnotation = "helm.sh/hook"

// installHooks are the hook events that happen when a release is installed
// or upgraded; hooks for them are kept as ordinary resources.
var installHooks = map[string]bool{"pre-install": true, "post-install": true, "pre-upgrade": true, "post-upgrade": true}

// helmJob is a chart render, run in process or in a render child.
type helmJob struct {
	Chart, Config []byte
	// Values are Request.Values as JSON, so that both ways see the same types.
	Values                          []byte
	Release, Namespace, KubeVersion string
	Limits                          Limits
}

func newHelmJob(req *Request, install, config []byte, limits Limits) (*helmJob, error) {
	values, err := json.Marshal(req.Values)
	if err != nil {
		return nil, fmt.Errorf("values are not JSON: %w", err)
	}
	return &helmJob{Chart: install, Config: config, Values: values, Release: req.ReleaseName,
		Namespace: req.Namespace, KubeVersion: req.KubeVersion, Limits: limits}, nil
}

// helmFile is a file of a chart or a rendered template.
type helmFile struct {
	Name string
	Data string
}

// helmOutput is what Helm made of a chart: its CRDs and rendered templates.
type helmOutput struct {
	// Chart is name-version, for errors.
	Chart string
	// CRDs of crds/ of the chart and its enabled subcharts, in Helm's order.
	CRDs []helmFile
	// Templates are the rendered templates with content, NOTES.txt aside,
	// in name order.
	Templates []helmFile
}

// runHelm renders a chart .tgz the way `helm template` does without a
// cluster; lookup finds nothing. Errors are *DocumentError or *LimitError.
func runHelm(job *helmJob) (*helmOutput, error) {
	chrt, err := loader.LoadArchive(bytes.NewReader(job.Chart))
	if err != nil {
		return nil, &DocumentError{Err: fmt.Errorf("loading the Helm chart: %w", err)}
	}
	name := chrt.Name() + "-" + chrt.Metadata.Version
	fail := func(err error) (*helmOutput, error) {
		return nil, &DocumentError{Source: "chart " + name, Err: err}
	}
	if chrt.Metadata.Type == "library" {
		return fail(errors.New("a library chart cannot be installed"))
	}
	var over map[string]any
	if err := utiljson.Unmarshal(job.Values, &over); err != nil {
		return fail(fmt.Errorf("values: %w", err))
	}
	values, err := chartValues(job.Config, over)
	if err != nil {
		return fail(err)
	}
	caps, err := capabilities(job.KubeVersion)
	if err != nil {
		return fail(err)
	}
	if kv := chrt.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return fail(fmt.Errorf("the chart needs Kubernetes %s, rendering for %s", kv, caps.KubeVersion.String()))
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, values); err != nil {
		return fail(fmt.Errorf("processing dependencies: %w", err))
	}
	release := chartutil.ReleaseOptions{Name: job.Release, Namespace: job.Namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(chrt, values, release, caps)
	if err != nil {
		return fail(fmt.Errorf("values: %w", err))
	}
	files, err := new(engine.Engine).Render(chrt, top)
	if err != nil {
		return fail(fmt.Errorf("rendering: %w", err))
	}
	return helmOutputOf(name, chrt, files, job.Limits.withDefaults())
}

// helmOutputOf collects what is worth parsing, within the byte bound.
func helmOutputOf(chartName string, chrt *chart.Chart, files map[string]string, limits Limits) (*helmOutput, error) {
	out := &helmOutput{Chart: chartName}
	var size int64
	for _, crd := range chrt.CRDObjects() {
		out.CRDs = append(out.CRDs, helmFile{Name: crd.Filename, Data: string(crd.File.Data)})
		size += int64(len(crd.File.Data))
	}
	names := make([]string, 0, len(files))
	for name, content := range files {
		if path.Base(name) == "NOTES.txt" || strings.TrimSpace(content) == "" {
			continue
		}
		names = append(names, name)
		size += int64(len(content))
	}
	if size > limits.MaxBytes {
		return nil, bytesLimit(limits, fmt.Sprintf("chart %s renders %d bytes", chartName, size))
	}
	sort.Strings(names)
	for _, name := range names {
		out.Templates = append(out.Templates, helmFile{Name: name, Data: files[name]})
	}
	return out, nil
}

// objects parses the output: CRDs first, then the templates. No hook runs,
// because there is no release: a hook object for install or upgrade is
// kept as an ordinary resource (it is applied once and stays, with its
// annotations); hooks only for test, delete or rollback are dropped.
func (o *helmOutput) objects(b *budget) ([]parsedObject, error) {
	var out []parsedObject
	for _, crd := range o.CRDs {
		objs, err := parseStream([]byte(crd.Data), crd.Name, b)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	for _, f := range o.Templates {
		objs, err := parseStream([]byte(f.Data), f.Name, b)
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
