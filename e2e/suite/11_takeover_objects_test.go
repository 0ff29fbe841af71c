package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// sampleObjects are the sample module's 1.0.0 objects as a renderer places
// them: namespaced ones in kyma-system.
func sampleObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	dir := filepath.Join(harness.RepoRoot(), "e2e", "testdata", "sample", "1.0.0")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		for _, doc := range bytes.Split(raw, []byte("\n---")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			o := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(doc, &o.Object), e.Name())
			switch o.GetKind() {
			case "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Namespace":
			default:
				o.SetNamespace(shared.DefaultRuntimeNamespace)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// installRuntimeCRDs installs the Kyma and ModuleTemplate CRDs in the
// runtime as the public lifecycle manager does: its labels, its field
// manager, no hash of ours.
func installRuntimeCRDs(t *testing.T, rt *harness.Runtime) error {
	t.Helper()
	crds, err := crd.ByKind(v1beta2.KymaKind, v1beta2.ModuleTemplateKind)
	if err != nil {
		return err
	}
	for _, c := range crds {
		c = c.DeepCopy()
		c.SetResourceVersion("")
		c.Labels = map[string]string{shared.ManagedByLabel: publicManagedBy}
		c.Annotations = nil
		c.Spec.Conversion = nil
		if err := rt.Client.Create(t.Context(), c, client.FieldOwner(shared.OperatorName)); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// publicCatalogCopy is the runtime copy the public lifecycle manager's
// catalog sync made of a KCP template.
func publicCatalogCopy(t *testing.T, name string) *v1beta2.ModuleTemplate {
	t.Helper()
	kcpTemplate := &v1beta2.ModuleTemplate{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: name}, kcpTemplate))
	return &v1beta2.ModuleTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: shared.DefaultRuntimeNamespace,
			Labels: map[string]string{shared.ManagedByLabel: publicManagedBy}},
		Spec: *kcpTemplate.Spec.DeepCopy(),
	}
}

// createSwitchUsersObjects creates objects of the runtime's users: a CR of the
// module's kind and a ConfigMap beside the module's objects.
func createSwitchUsersObjects(t *testing.T, rt *harness.Runtime) []*unstructured.Unstructured {
	t.Helper()
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "sample.kyma-project.io/v1alpha1", "kind": "Sample",
		"metadata": map[string]any{"name": "kept-across-the-switch", "namespace": "default"},
		"spec":     map[string]any{"greeting": "mine"},
	}}
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "users-settings", "namespace": shared.DefaultRuntimeNamespace},
		"data":     map[string]any{"mine": "yes"},
	}}
	users := []*unstructured.Unstructured{cr, cm}
	for _, o := range users {
		require.NoError(t, rt.Client.Create(t.Context(), o.DeepCopy(), client.FieldOwner("kubectl-create")))
		// A user's CR would block later removals of the module here.
		t.Cleanup(func() { _ = client.IgnoreNotFound(rt.Client.Delete(context.WithoutCancel(t.Context()), o)) })
	}
	return users
}

// publicAgentObjects are the public lifecycle manager's agent (skr-webhook)
// as it installs it in kyma-system, with its managed-by label. The webhook
// watches a group nobody writes here: its agent does not run.
func publicAgentObjects() []*unstructured.Unstructured {
	labels := map[string]any{shared.ManagedByLabel: publicManagedBy, "app": "skr-webhook"}
	meta := func(name string, namespaced bool) map[string]any {
		m := map[string]any{"name": name, "labels": labels}
		if namespaced {
			m["namespace"] = shared.DefaultRuntimeNamespace
		}
		return m
	}
	obj := func(apiVersion, kind string, metadata map[string]any, fields map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": metadata}
		for k, v := range fields {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	service := func(name string, port int64) *unstructured.Unstructured {
		return obj("v1", "Service", meta(name, true), map[string]any{"spec": map[string]any{
			"selector": map[string]any{"app": "skr-webhook"}, "ports": []any{map[string]any{"port": port}}}})
	}
	policy := func(name string) *unstructured.Unstructured {
		return obj("networking.k8s.io/v1", "NetworkPolicy", meta(name, true), map[string]any{"spec": map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]any{"app": "skr-webhook"}}, "policyTypes": []any{"Ingress"}}})
	}
	return []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", meta("skr-webhook", true), map[string]any{"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "skr-webhook"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "skr-webhook"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "server", "image": "europe-docker.pkg.dev/kyma-project/prod/runtime-watcher:1.0.0"}}},
			}}}),
		service("skr-webhook", 443),
		service("skr-webhook-metrics", 2112),
		obj("v1", "Secret", meta("skr-webhook-tls", true), map[string]any{"type": "Opaque", "data": map[string]any{}}),
		policy("kyma-project.io--seed-to-watcher"),
		policy("kyma-project.io--watcher-to-apiserver"),
		policy("kyma-project.io--metrics-to-watcher"),
		policy("kyma-project.io--watcher-to-dns"),
		obj("scheduling.k8s.io/v1", "PriorityClass", meta("skr-webhook-priority", false), map[string]any{"value": int64(1000000000)}),
		obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", meta("skr-webhook", false), map[string]any{"webhooks": []any{map[string]any{
			"name": "lifecycle-manager.kyma-project.io", "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
			"failurePolicy": "Ignore", "timeoutSeconds": int64(1),
			"clientConfig": map[string]any{"service": map[string]any{"name": "skr-webhook", "namespace": shared.DefaultRuntimeNamespace, "path": "/validate/kyma"}},
			"rules": []any{map[string]any{"apiGroups": []any{"nobody.example.com"}, "apiVersions": []any{"*"},
				"operations": []any{"CREATE", "UPDATE"}, "resources": []any{"*"}}},
		}}}),
	}
}

// stateLog records every state the KCP's watch shows for a runtime's
// Kyma and its Manifests.
type stateLog struct {
	mu     sync.Mutex
	states []string
	stop   func() []string
}

func (l *stateLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.states) == 0 || l.states[len(l.states)-1] != s {
		l.states = append(l.states, s)
	}
}

// watchStates watches the runtime's Kyma and its Manifests until stop.
func watchStates(t *testing.T, rt *harness.Runtime) *stateLog {
	t.Helper()
	wc, err := client.NewWithWatch(h.KCP.Config, client.Options{Scheme: h.KCP.Client.Scheme()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	l := &stateLog{}
	var wg sync.WaitGroup
	follow := func(list client.ObjectList, opts ...client.ListOption) {
		w, err := wc.Watch(ctx, list, append(opts, client.InNamespace(harness.Namespace))...)
		require.NoError(t, err)
		wg.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if ev.Type == watch.Added || ev.Type == watch.Modified {
						l.add(stateOf(ev.Object))
					}
				}
			}
		})
	}
	follow(&v1beta2.KymaList{}, client.MatchingFields{"metadata.name": rt.KymaName})
	follow(&v1beta2.ManifestList{}, client.MatchingLabels{shared.KymaNameLabel: rt.KymaName})
	l.stop = func() []string {
		cancel()
		wg.Wait()
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.states
	}
	t.Cleanup(func() { l.stop() })
	return l
}

func stateOf(o any) string {
	switch o := o.(type) {
	case *v1beta2.Kyma:
		return "Kyma " + string(o.Status.State)
	case *v1beta2.Manifest:
		return "Manifest " + string(o.Status.State)
	}
	return ""
}

// eventsOn are the reasons and notes of the Events of a type on the
// objects of the given UIDs in the KCP namespace (an earlier Kyma of the
// same name has Events of its own).
func eventsOn(t *testing.T, typ string, uids ...types.UID) []string {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, h.KCP.Client.List(t.Context(), &list, client.InNamespace(harness.Namespace)))
	var found []string
	for _, e := range list.Items {
		if e.Type == typ && slices.Contains(uids, e.Regarding.UID) {
			found = append(found, e.Reason+": "+e.Note)
		}
	}
	return found
}
