package kyma_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// The suite's OCI registry: go-containerregistry's real registry, behind a
// switch that plays an outage and a corruption of chosen blobs.
var (
	registryHost string
	registryDown atomic.Bool
	corrupted    sync.Map // digest → true
)

func startRegistry() func() {
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if registryDown.Load() {
			http.Error(w, "registry down for the test", http.StatusServiceUnavailable)
			return
		}
		for _, part := range strings.Split(r.URL.Path, "/") {
			if _, bad := corrupted.Load(part); bad && r.Method == http.MethodGet {
				_, _ = w.Write([]byte("not the content that was pushed"))
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	registryHost = strings.TrimPrefix(srv.URL, "http://")
	return srv.Close
}

// module is a test module: a CRD for the kind named after it, a Deployment
// and a ConfigMap, plus extra YAML documents; published as a raw-manifest
// layer with its OCM descriptor, and a ModuleTemplate.
type module struct {
	name, version, channel string
	mandatory              bool
	labels                 map[string]string
	data                   map[string]any
	templateName           string
	extra                  []string
	omitConfigMap          bool
}

const testGroup = "test.lifecycle-manager.io"

func kindOf(module string) string { return strings.ToUpper(module[:1]) + module[1:] }

// defaultCR is a module's default CR, of the kind its CRD defines.
func defaultCR(kind string) map[string]any {
	return map[string]any{
		"apiVersion": testGroup + "/v1", "kind": kind,
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"replicas": int64(1)},
	}
}

func (m module) manifests() string {
	docs := []string{fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]ss.%[2]s}
spec:
  group: %[2]s
  scope: Namespaced
  names: {kind: %[3]s, plural: %[1]ss, singular: %[1]s, listKind: %[3]sList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, m.name, testGroup, kindOf(m.name)), fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s-operator}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: manager, image: "registry.example.com/kyma/%[1]s-operator:%[2]s"}]}
`, m.name, m.version)}
	if !m.omitConfigMap {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-config}\ndata: {version: %q}\n", m.name, m.version))
	}
	return strings.Join(append(docs, m.extra...), "---\n")
}

// publish pushes the module's layer and descriptor to the registry and
// creates its ModuleTemplate.
func publish(t *testing.T, m module) {
	t.Helper()
	layer, err := render.TarManifests(map[string][]byte{"module.yaml": []byte(m.manifests())})
	require.NoError(t, err)
	desc := map[string]any{
		"meta": map[string]any{"schemaVersion": "v2"},
		"component": map[string]any{
			"name": "kyma-project.io/module/" + m.name, "version": m.version, "provider": "test",
			"repositoryContexts": []any{map[string]any{"type": "OCIRegistry", "baseUrl": registryHost + "/modules", "componentNameMapping": "urlPath"}},
			"resources": []any{map[string]any{
				"name": "raw-manifest", "type": "directory", "relation": "local", "version": m.version,
				"access": map[string]any{"type": "localBlob", "localReference": oci.Digest(layer), "mediaType": render.MediaTypeTar},
			}},
		},
	}
	raw, err := json.Marshal(desc)
	require.NoError(t, err)
	_, err = oci.NewPusher(oci.Options{}).PushComponentVersion(t.Context(), raw, []oci.LocalBlob{{MediaType: render.MediaTypeTar, Data: layer}}, nil)
	require.NoError(t, err)

	name := m.templateName
	if name == "" {
		name = m.name + "-" + m.version
	}
	tmpl := &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: kcpNamespace, Labels: m.labels},
		Spec: v1beta2.ModuleTemplateSpec{
			ModuleName: m.name, Version: m.version, Channel: m.channel, Mandatory: m.mandatory,
			Descriptor: runtime.RawExtension{Raw: raw},
		},
	}
	if m.data != nil {
		tmpl.Spec.Data = &unstructured.Unstructured{Object: m.data}
	}
	require.NoError(t, kcp.Client.Create(t.Context(), tmpl))
}

// playModuleOperator does in the runtime what no process does on a bare API
// server: the module's Deployment becomes available (the kubelet's part)
// and, when the module has a default CR, its status.state becomes state
// (the module operator's part).
func playModuleOperator(t *testing.T, ns, module, state string, withCR bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		return markAvailable(t.Context(), ns, module+"-operator") == nil
	}, timeout, tick, "the Deployment of %s appears in %s", module, ns)
	if !withCR {
		return
	}
	require.Eventually(t, func() bool {
		cr := &unstructured.Unstructured{}
		cr.SetAPIVersion(testGroup + "/v1")
		cr.SetKind(kindOf(module))
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "default"}, cr) != nil {
			return false
		}
		_ = unstructured.SetNestedField(cr.Object, state, "status", "state")
		return runtimeEnv.Client.Status().Update(t.Context(), cr) == nil
	}, timeout, tick, "the default CR of %s appears in %s", module, ns)
}

func markAvailable(ctx context.Context, ns, name string) error {
	d := &appsv1.Deployment{}
	if err := runtimeEnv.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return err
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas,
		ReadyReplicas: replicas, AvailableReplicas: replicas,
	}
	return runtimeEnv.Client.Status().Update(ctx, d)
}
