package fleet

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
)

// runtimeKinds are the namespaced kinds the operator writes into a
// runtime: the runtime Kyma, the catalog, the agent's objects and the
// modules' objects.
var runtimeKinds = []schema.GroupVersionKind{
	{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"},
	{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "ModuleTemplate"},
	{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "ModuleReleaseMeta"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
}

// withStatus are the kinds whose status is written after the object: the
// runtime Kyma's by the operator, a Deployment's by the kubelet.
var withStatus = []string{"Kyma", "Deployment"}

// runtimeModel is what the operator wrote into one Ready runtime, to be
// copied into fresh namespaces by the full bound.
type runtimeModel struct {
	objects  []*unstructured.Unstructured
	webhooks []admissionv1.ValidatingWebhookConfiguration
}

// writes counts the requests one copy of the model costs: its namespace,
// each object and each status.
func (m *runtimeModel) writes() int {
	n := 1 + len(m.objects) + len(m.webhooks)
	for _, o := range m.objects {
		if slices.Contains(withStatus, o.GetKind()) {
			n++
		}
	}
	return n
}

// readRuntimeModel reads what the operator wrote into runtime i.
func (f *Fleet) readRuntimeModel(ctx context.Context, i int) (*runtimeModel, error) {
	c, ns := f.server(i), RuntimeNamespace(i)
	m := &runtimeModel{}
	for _, gvk := range runtimeKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing the %s of runtime %d: %w", gvk.Kind, i, err)
		}
		for j := range list.Items {
			m.objects = append(m.objects, &list.Items[j])
		}
	}
	var hooks admissionv1.ValidatingWebhookConfigurationList
	if err := c.List(ctx, &hooks); err != nil {
		return nil, fmt.Errorf("listing webhook configurations: %w", err)
	}
	for _, h := range hooks.Items {
		if slices.ContainsFunc(h.Webhooks, func(w admissionv1.ValidatingWebhook) bool { return webhookOf(w, ns) }) {
			m.webhooks = append(m.webhooks, h)
		}
	}
	if len(m.objects) == 0 {
		return nil, fmt.Errorf("runtime %d holds none of the operator's objects to model the bound on", i)
	}
	return m, nil
}

// webhookOf reports whether w is the agent's of the runtime in ns: it calls
// the agent's Service there or, for an agent reached by URL (the runtimes
// with a real agent), is scoped to ns by its namespace selector.
func webhookOf(w admissionv1.ValidatingWebhook, ns string) bool {
	if w.ClientConfig.Service != nil {
		return w.ClientConfig.Service.Namespace == ns
	}
	return w.NamespaceSelector != nil && w.NamespaceSelector.MatchLabels[corev1.LabelMetadataName] == ns
}

// boundRuntimeNamespace holds runtime i's copy in the full bound.
func boundRuntimeNamespace(i int) string { return fmt.Sprintf("bound-%05d", i) }

// copyRuntime writes a copy of the model into a namespace of its own on
// runtime i's server: the namespace, every object and the statuses, then
// the webhook configurations, scoped to that namespace.
func (f *Fleet) copyRuntime(ctx context.Context, w boundWriter, i int, m *runtimeModel) error {
	c, ns := f.server(i), boundRuntimeNamespace(i)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	for _, model := range m.objects {
		o := fresh(model, ns, model.GetName())
		if err := w.create(ctx, c, o); err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", o.GetKind(), ns, o.GetName(), err)
		}
		if !slices.Contains(withStatus, o.GetKind()) {
			continue
		}
		o.Object["status"] = runtime.DeepCopyJSONValue(model.Object["status"])
		if err := w.status(ctx, c, o, o.GetKind() == "Deployment"); err != nil {
			return fmt.Errorf("writing the status of %s %s/%s: %w", o.GetKind(), ns, o.GetName(), err)
		}
	}
	for _, h := range m.webhooks {
		h := boundWebhook(h, i)
		if err := w.create(ctx, c, &h); err != nil {
			return fmt.Errorf("creating webhook configuration %s: %w", h.Name, err)
		}
	}
	return nil
}

// fresh is a copy of model to create as name in ns: without what the API
// server set, its status or finalizers, and without the managed-by label,
// so that the harness's kubelet leaves its Deployments to the bound.
func fresh(model *unstructured.Unstructured, ns, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range model.Object {
		if k != "status" && k != "metadata" {
			o.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	o.SetAPIVersion(model.GetAPIVersion())
	o.SetKind(model.GetKind())
	o.SetNamespace(ns)
	o.SetName(name)
	labels := model.GetLabels()
	delete(labels, shared.ManagedByLabel)
	o.SetLabels(labels)
	o.SetAnnotations(model.GetAnnotations())
	if o.GetKind() == "Service" {
		// The cluster IP is the server's to allocate.
		unstructured.RemoveNestedField(o.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(o.Object, "spec", "clusterIPs")
	}
	return o
}

func boundWebhook(h admissionv1.ValidatingWebhookConfiguration, i int) admissionv1.ValidatingWebhookConfiguration {
	out := admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-%s", h.Name, boundRuntimeNamespace(i)), Labels: h.Labels}}
	for _, w := range h.Webhooks {
		w := *w.DeepCopy()
		w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{
			corev1.LabelMetadataName: boundRuntimeNamespace(i)}}
		if w.ClientConfig.URL != nil {
			// A real agent's URL: the copy calls a Service without
			// endpoints instead, as every simulated runtime's webhook does.
			w.ClientConfig.Service = &admissionv1.ServiceReference{Name: h.Name, Path: urlPath(*w.ClientConfig.URL)}
			w.ClientConfig.URL = nil
		}
		if w.ClientConfig.Service != nil {
			w.ClientConfig.Service.Namespace = boundRuntimeNamespace(i)
		}
		out.Webhooks = append(out.Webhooks, w)
	}
	return out
}

func urlPath(raw string) *string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return nil
	}
	return &u.Path
}

// deleteRuntimeCopies removes what the full bound wrote into the runtime
// servers. The namespaces stay Terminating (no namespace controller runs
// here); their objects and the webhook configurations are deleted, so that
// later phases do not pay for them.
func (f *Fleet) deleteRuntimeCopies(ctx context.Context, m *runtimeModel) {
	_ = forEach(ctx, f.opts.Kymas, 32, func(ctx context.Context, i int) error {
		c, ns := f.server(i), boundRuntimeNamespace(i)
		for _, model := range m.objects {
			o := fresh(model, ns, model.GetName())
			o.SetFinalizers(nil)
			if err := c.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				f.opts.Progress("deleting the bound's %s %s/%s: %v", o.GetKind(), ns, o.GetName(), err)
			}
		}
		for _, h := range m.webhooks {
			h := boundWebhook(h, i)
			_ = client.IgnoreNotFound(c.Delete(ctx, &h))
		}
		_ = client.IgnoreNotFound(c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		return nil
	})
}
