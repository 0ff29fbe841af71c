package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// kinds the chart renders; what is not rendered any more is deleted.
var kinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "Service"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
}

// Installer installs agents into runtimes.
type Installer struct {
	opts     Options
	chart    render.Layer
	renderer *render.Renderer
}

// NewInstaller prepares the embedded chart.
func NewInstaller(opts Options, renderer *render.Renderer) (*Installer, error) {
	tgz, err := chartArchive()
	if err != nil {
		return nil, err
	}
	return &Installer{opts: opts, chart: render.Layer{Data: tgz}, renderer: renderer}, nil
}

// Status is the agent's state in one runtime.
type Status struct {
	Ready   bool
	Message string
	// Created is when the agent's Deployment was created; zero when it does
	// not exist.
	Created time.Time
	// WebhookURLRefused says why the Kyma's agent-webhook-url annotation
	// was ignored; empty when it was followed or is not set.
	WebhookURLRefused string
	// PublicAgentRemoved names the objects of the public lifecycle
	// manager's agent that this install deleted.
	PublicAgentRemoved []string
}

// Install applies the agent of kyma's runtime when its chart values changed
// or its Deployment is gone, and reports whether the Deployment is
// available. The values decide: the chart is the one built in, so equal
// values render equal objects, and a resync need not render at all.
func (in *Installer) Install(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, caBundle []byte, watchers []v1beta2.Watcher) (Status, error) {
	status, err := in.install(ctx, kyma, rt, caBundle, watchers)
	_, status.WebhookURLRefused = in.opts.webhookURL(kyma)
	return status, err
}

func (in *Installer) install(ctx context.Context, kyma *v1beta2.Kyma, rt *remote.Runtime, caBundle []byte, watchers []v1beta2.Watcher) (Status, error) {
	values, err := in.opts.values(kyma, rt.Namespace, caBundle, watchers)
	if err != nil {
		return Status{}, err
	}
	status, err := deploymentStatus(ctx, rt)
	if err != nil {
		return Status{}, err
	}
	memo := "agent/" + rt.Namespace
	hash := runtimewrite.Hash(values)
	if rt.Facts.Recall(memo) == hash && status.Message != missing {
		return status, nil
	}
	objs, err := in.renderValues(ctx, rt.Namespace, values)
	if err != nil {
		return Status{}, err
	}
	deployment, err := apply(ctx, rt, objs, status.Message == missing)
	if err != nil {
		return Status{}, err
	}
	removed, err := removePublicAgent(ctx, rt, rt.Namespace)
	if err != nil {
		return Status{}, err
	}
	rt.Facts.Remember(memo, hash)
	if deployment != nil {
		status = statusOf(deployment)
	} else if status, err = deploymentStatus(ctx, rt); err != nil {
		return Status{}, err
	}
	status.PublicAgentRemoved = removed
	return status, nil
}

// render renders the agent of kyma's runtime namespace.
func (in *Installer) render(ctx context.Context, kyma *v1beta2.Kyma, namespace string, caBundle []byte,
	watchers []v1beta2.Watcher,
) ([]*unstructured.Unstructured, error) {
	values, err := in.opts.values(kyma, namespace, caBundle, watchers)
	if err != nil {
		return nil, err
	}
	return in.renderValues(ctx, namespace, values)
}

// renderValues renders the chart with values for namespace.
func (in *Installer) renderValues(ctx context.Context, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	objs, err := in.renderer.Render(ctx, render.Request{
		Module: "skr-agent", Namespace: namespace, Type: render.HelmChart, Install: in.chart,
		Values: values, ReleaseName: Fullname(namespace), Trusted: true, // our own chart: no render process per runtime
	}, render.BuiltinScope)
	if err != nil {
		return nil, fmt.Errorf("rendering the skr-agent chart: %w", err)
	}
	return scopeWebhooks(objs, namespace), nil
}

// scopeWebhooks limits the webhooks of an agent outside kyma-system to its
// own namespace. Such an agent shares its API server with other runtimes
// (the sync-namespace annotation); without the selector every agent there
// would be called for, and report, the writes of all of them. Cluster-scoped
// objects still reach every webhook: the API server ignores namespace
// selectors for them. objs may come from the render cache and are not changed.
func scopeWebhooks(objs []*unstructured.Unstructured, namespace string) []*unstructured.Unstructured {
	if namespace == shared.DefaultRuntimeNamespace {
		return objs
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o
		if o.GroupVersionKind().GroupKind() != webhookConfigKind {
			continue
		}
		scoped := o.DeepCopy()
		hooks, _, _ := unstructured.NestedSlice(scoped.Object, "webhooks")
		for _, h := range hooks {
			if hook, ok := h.(map[string]any); ok {
				hook["namespaceSelector"] = map[string]any{
					"matchLabels": map[string]any{corev1.LabelMetadataName: namespace},
				}
			}
		}
		if err := unstructured.SetNestedSlice(scoped.Object, hooks, "webhooks"); err == nil {
			out[i] = scoped
		}
	}
	return out
}

var webhookConfigKind = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}

const missing = "the agent's Deployment does not exist"

func deploymentStatus(ctx context.Context, rt *remote.Runtime) (Status, error) {
	d := &appsv1.Deployment{}
	err := rt.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: Fullname(rt.Namespace)}, d)
	switch {
	case apierrors.IsNotFound(err):
		return Status{Message: missing}, nil
	case err != nil:
		return Status{}, fmt.Errorf("reading the agent's Deployment: %w", err)
	}
	return statusOf(d), nil
}

// statusOf tells from a stored Deployment whether the agent runs.
func statusOf(d *appsv1.Deployment) Status {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.AvailableReplicas < 1 {
		return Status{Message: fmt.Sprintf("the agent is not available yet (0 of %d replicas)", want), Created: d.CreationTimestamp.Time}
	}
	return Status{Ready: true, Message: fmt.Sprintf("the agent runs (%d of %d replicas available)", d.Status.AvailableReplicas, want),
		Created: d.CreationTimestamp.Time}
}

// apply writes the rendered objects — created when the agent is new
// (absent), else applied — and deletes the chart's objects that are not
// rendered any more (the webhook configuration without watchers). It
// returns the Deployment as stored, whose status tells whether the agent
// runs without another read.
func apply(ctx context.Context, rt *remote.Runtime, objs []*unstructured.Unstructured, absent bool) (*appsv1.Deployment, error) {
	rendered := map[schema.GroupKind]bool{}
	var deployment *appsv1.Deployment
	for _, o := range objs {
		rendered[o.GroupVersionKind().GroupKind()] = true
		stored, err := write(ctx, rt, o.DeepCopy(), absent)
		if err != nil {
			return nil, fmt.Errorf("applying the agent's %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if stored.GroupVersionKind().GroupKind() == kinds[0].GroupKind() {
			deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(stored.Object, deployment); err != nil {
				return nil, fmt.Errorf("reading the agent's stored Deployment: %w", err)
			}
		}
	}
	var errs []error
	for _, gvk := range kinds {
		if !rendered[gvk.GroupKind()] {
			errs = append(errs, deleteObject(ctx, rt, gvk))
		}
	}
	return deployment, errors.Join(errs...)
}

// write creates obj when absent and it does not exist, else applies it.
func write(ctx context.Context, rt *remote.Runtime, obj *unstructured.Unstructured, absent bool) (*unstructured.Unstructured, error) {
	if absent {
		created, err := runtimewrite.Create(ctx, rt, obj)
		if created || err != nil {
			return obj, err
		}
	}
	return obj, runtimewrite.ApplyOwned(ctx, rt, obj)
}

// Remove deletes the agent from the runtime.
func Remove(ctx context.Context, rt *remote.Runtime) error {
	var errs []error
	for _, gvk := range kinds {
		errs = append(errs, deleteObject(ctx, rt, gvk))
	}
	rt.Facts.Forget("agent/" + rt.Namespace)
	return errors.Join(errs...)
}

func deleteObject(ctx context.Context, rt *remote.Runtime, gvk schema.GroupVersionKind) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(Fullname(rt.Namespace))
	if gvk.Kind != "ValidatingWebhookConfiguration" {
		u.SetNamespace(rt.Namespace)
	}
	err := rt.Delete(ctx, u)
	if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return fmt.Errorf("deleting the agent's %s: %w", gvk.Kind, err)
	}
	return nil
}
