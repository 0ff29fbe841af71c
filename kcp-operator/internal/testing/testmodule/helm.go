package testmodule

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// HelmModule is a module shipped as a Helm chart: a Deployment
// <name>-operator whose replicas come from the values, with a config layer
// of values that overrides the chart's defaults.
type HelmModule struct {
	Name, Version string
	Config        map[string]any
	// Templates are more files of templates/, by name.
	Templates map[string]string
}

func (m HelmModule) chart() ([]byte, error) {
	files := map[string]string{
		"Chart.yaml":  fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", m.Name, m.Version),
		"values.yaml": "replicas: 1\nimage: registry.example.com/kyma/" + m.Name + "-operator:" + m.Version + "\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Chart.Name }}-operator}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Chart.Name }}}}
  template:
    metadata: {labels: {app: {{ .Chart.Name }}}}
    spec: {containers: [{name: manager, image: {{ .Values.image | quote }}}]}
`,
	}
	var extra []string
	for name, content := range m.Templates {
		files["templates/"+name] = content
		extra = append(extra, "templates/"+name)
	}
	sort.Strings(extra)
	names := append([]string{"Chart.yaml", "values.yaml", "templates/deployment.yaml"}, extra...)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range names {
		data := []byte(files[name])
		if err := tw.WriteHeader(&tar.Header{Name: m.Name + "/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Publish pushes the chart and the config layer with their descriptor and
// creates the ModuleTemplate.
func (m HelmModule) Publish(ctx context.Context, kcp client.Client, registryHost, namespace string) error {
	chart, err := m.chart()
	if err != nil {
		return err
	}
	config, err := yaml.Marshal(m.Config)
	if err != nil {
		return err
	}
	resource := func(name, typ string, data []byte, mediaType string) map[string]any {
		return map[string]any{"name": name, "type": typ, "relation": "local", "version": m.Version,
			"access": map[string]any{"type": "localBlob", "localReference": oci.Digest(data), "mediaType": mediaType}}
	}
	desc := map[string]any{
		"meta": map[string]any{"schemaVersion": "v2"},
		"component": map[string]any{
			"name": "kyma-project.io/module/" + m.Name, "version": m.Version, "provider": "test",
			"repositoryContexts": []any{map[string]any{"type": "OCIRegistry", "baseUrl": registryHost + "/modules", "componentNameMapping": "urlPath"}},
			"resources": []any{
				resource("helm-chart", "helmChart", chart, render.MediaTypeHelmChart),
				resource("config", "yaml", config, render.MediaTypeYAML),
			},
		},
	}
	raw, err := json.Marshal(desc)
	if err != nil {
		return err
	}
	blobs := []oci.LocalBlob{{MediaType: render.MediaTypeHelmChart, Data: chart}, {MediaType: render.MediaTypeYAML, Data: config}}
	if _, err := oci.NewPusher(oci.Options{InsecureRegistries: []string{registryHost}}).PushComponentVersion(ctx, raw, blobs, nil); err != nil {
		return err
	}
	return kcp.Create(ctx, &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name + "-" + m.Version, Namespace: namespace},
		Spec:       v1beta2.ModuleTemplateSpec{ModuleName: m.Name, Version: m.Version, Descriptor: runtime.RawExtension{Raw: raw}},
	})
}
