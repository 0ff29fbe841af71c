package testmodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/registry"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// Group is the API group of the test modules' CRDs.
const Group = "test.lifecycle-manager.io"

// Registry is go-containerregistry's in-process registry behind a switch.
type Registry struct {
	Host      string
	Down      atomic.Bool
	corrupted sync.Map
	srv       *httptest.Server
}

// StartRegistry serves a registry on a loopback port.
func StartRegistry() *Registry {
	r := &Registry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.Down.Load() {
			http.Error(w, "registry down for the test", http.StatusServiceUnavailable)
			return
		}
		for _, part := range strings.Split(req.URL.Path, "/") {
			if _, bad := r.corrupted.Load(part); bad && req.Method == http.MethodGet {
				_, _ = w.Write([]byte("not the content that was pushed"))
				return
			}
		}
		reg.ServeHTTP(w, req)
	}))
	r.Host = strings.TrimPrefix(r.srv.URL, "http://")
	return r
}

// Close stops the registry.
func (r *Registry) Close() { r.srv.Close() }

// Corrupt makes the registry serve wrong content for digest; the returned
// function undoes it.
func (r *Registry) Corrupt(digest string) func() {
	r.corrupted.Store(digest, true)
	return func() { r.corrupted.Delete(digest) }
}

// Module is a test module: a CRD for the kind named after it, a Deployment
// <name>-operator and a ConfigMap <name>-config, plus extra YAML documents.
type Module struct {
	Name, Version, Channel string
	Mandatory              bool
	Labels                 map[string]string
	Data                   map[string]any
	TemplateName           string
	Extra                  []string
	OmitConfigMap          bool
}

// Kind is the kind the module's CRD defines.
func Kind(module string) string { return strings.ToUpper(module[:1]) + module[1:] }

// DefaultCR is a module's default CR.
func DefaultCR(kind string) map[string]any {
	return map[string]any{
		"apiVersion": Group + "/v1", "kind": kind,
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"replicas": int64(1)},
	}
}

// Manifests is the module's YAML stream.
func (m Module) Manifests() string {
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
`, m.Name, Group, Kind(m.Name)), fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s-operator}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: manager, image: "registry.example.com/kyma/%[1]s-operator:%[2]s"}]}
`, m.Name, m.Version)}
	if !m.OmitConfigMap {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-config}\ndata: {version: %q}\n", m.Name, m.Version))
	}
	return strings.Join(append(docs, m.Extra...), "---\n")
}

// Publish pushes the module's layer and descriptor to the registry and
// creates its ModuleTemplate in namespace, the descriptor embedded.
func (m Module) Publish(ctx context.Context, kcp client.Client, registryHost, namespace string) error {
	raw, err := m.Push(ctx, registryHost)
	if err != nil {
		return err
	}
	name := m.TemplateName
	if name == "" {
		name = m.Name + "-" + m.Version
	}
	tmpl := &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: m.Labels},
		Spec: v1beta2.ModuleTemplateSpec{
			ModuleName: m.Name, Version: m.Version, Channel: m.Channel, Mandatory: m.Mandatory,
			Descriptor: runtime.RawExtension{Raw: raw},
		},
	}
	if m.Data != nil {
		tmpl.Spec.Data = &unstructured.Unstructured{Object: m.Data}
	}
	return kcp.Create(ctx, tmpl)
}

// Component is the module's OCM component name.
func (m Module) Component() string { return "kyma-project.io/module/" + m.Name }

// Push pushes the module's layer and its component version to
// registryHost/modules and returns the descriptor.
func (m Module) Push(ctx context.Context, registryHost string) ([]byte, error) {
	layer, err := render.TarManifests(map[string][]byte{"module.yaml": []byte(m.Manifests())})
	if err != nil {
		return nil, err
	}
	desc := map[string]any{
		"meta": map[string]any{"schemaVersion": "v2"},
		"component": map[string]any{
			"name": m.Component(), "version": m.Version, "provider": "test",
			"repositoryContexts": []any{map[string]any{"type": "OCIRegistry", "baseUrl": registryHost + "/modules", "componentNameMapping": "urlPath"}},
			"resources": []any{map[string]any{
				"name": "raw-manifest", "type": "directory", "relation": "local", "version": m.Version,
				"access": map[string]any{"type": "localBlob", "localReference": oci.Digest(layer), "mediaType": render.MediaTypeTar},
			}},
		},
	}
	raw, err := json.Marshal(desc)
	if err != nil {
		return nil, err
	}
	if _, err := oci.NewPusher(oci.Options{InsecureRegistries: []string{registryHost}}).PushComponentVersion(ctx, raw, []oci.LocalBlob{{MediaType: render.MediaTypeTar, Data: layer}}, nil); err != nil {
		return nil, err
	}
	return raw, nil
}

// MarkAvailable plays the kubelet: the Deployment reports all replicas available.
func MarkAvailable(ctx context.Context, c client.Client, ns, name string) error {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
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
	return c.Status().Update(ctx, d)
}

// SetCRState plays the module operator: the module's default CR reports state.
func SetCRState(ctx context.Context, c client.Client, ns, module, state string) error {
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion(Group + "/v1")
	cr.SetKind(Kind(module))
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, cr); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(cr.Object, state, "status", "state"); err != nil {
		return err
	}
	return c.Status().Update(ctx, cr)
}
