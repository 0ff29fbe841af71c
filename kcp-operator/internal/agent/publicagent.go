package agent

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// publicObject is one object of the public lifecycle manager's agent
// (skr-webhook) as it leaves it in a runtime.
type publicObject struct {
	gvk  schema.GroupVersionKind
	name string
	// clusterScoped objects have no namespace.
	clusterScoped bool
}

func (o publicObject) String() string { return o.gvk.Kind + " " + o.name }

// publicAgent lists the public agent's objects in the order they are
// removed. The ValidatingWebhookConfiguration comes last: while it exists
// the removal is not finished, so one read of it tells whether anything is
// left to do, and a removal cut short resumes at the next install.
var publicAgent = []publicObject{
	{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, name: "skr-webhook"},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, name: "skr-webhook"},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, name: "skr-webhook-metrics"},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, name: "skr-webhook-tls"},
	{gvk: networkPolicy, name: "kyma-project.io--seed-to-watcher"},
	{gvk: networkPolicy, name: "kyma-project.io--watcher-to-apiserver"},
	{gvk: networkPolicy, name: "kyma-project.io--metrics-to-watcher"},
	{gvk: networkPolicy, name: "kyma-project.io--watcher-to-dns"},
	{gvk: schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}, name: "skr-webhook-priority", clusterScoped: true},
	{gvk: schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}, name: "skr-webhook", clusterScoped: true},
}

var networkPolicy = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}

// removePublicAgent deletes the public lifecycle manager's agent from the
// runtime, so that two agents do not report the same changes, and returns
// what it deleted. Only objects that carry the public managed-by label are
// deleted, each under a UID precondition: an object of that name someone
// else made stays. A runtime without the public agent costs one read.
func removePublicAgent(ctx context.Context, rt *remote.Runtime, namespace string) ([]string, error) {
	webhooks := publicAgent[len(publicAgent)-1]
	if found, err := deletePublic(ctx, rt, webhooks, namespace, true); err != nil || !found {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, o := range publicAgent {
		found, err := deletePublic(ctx, rt, o, namespace, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if found {
			removed = append(removed, o.String())
		}
	}
	return removed, errors.Join(errs...)
}

// deletePublic deletes o when it exists with the public managed-by label
// and reports whether it did; onlyLook reads without deleting.
func deletePublic(ctx context.Context, rt *remote.Runtime, o publicObject, namespace string, onlyLook bool) (bool, error) {
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(o.gvk)
	key := client.ObjectKey{Name: o.name}
	if !o.clusterScoped {
		key.Namespace = namespace
	}
	err := rt.Get(ctx, key, current)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading the public agent's %s: %w", o, err)
	case current.GetLabels()[shared.ManagedByLabel] != shared.PublicManagedByValue:
		return false, nil
	case onlyLook:
		return true, nil
	}
	uid := current.GetUID()
	err = rt.Delete(ctx, current, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return false, fmt.Errorf("deleting the public agent's %s: %w", o, err)
	}
	return err == nil, nil
}
