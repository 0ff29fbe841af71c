package index

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/listener/event"
)

// RuntimeID is the runtime ID of a Kyma.
func RuntimeID(k *v1beta2.Kyma) string {
	if id := k.RuntimeID(); id != "" {
		return id
	}
	return k.Name
}

func objectKey(kyma, group, kind, namespace, name string) string {
	return strings.Join([]string{kyma, group, kind, namespace, name}, "|")
}

// anyNamespace stands for the namespace of a default CR that names none:
// the Manifest controller defaults it in the runtime.
const anyNamespace = "*"

func manifestKeys(o client.Object) []string {
	mf := o.(*v1beta2.Manifest)
	kyma := mf.Labels[shared.KymaNameLabel]
	keys := make([]string, 0, len(mf.Status.Synced)+1)
	for _, r := range mf.Status.Synced {
		keys = append(keys, objectKey(kyma, r.Group, r.Kind, r.Namespace, r.Name))
	}
	if cr := mf.Spec.Resource; cr != nil {
		ns := cr.GetNamespace()
		if ns == "" {
			ns = anyNamespace
		}
		keys = append(keys, objectKey(kyma, cr.GroupVersionKind().Group, cr.GetKind(), ns, cr.GetName()))
	}
	return keys
}

// KymasOf returns the Kyma of a runtime as a request.
func KymasOf(ctx context.Context, reader client.Reader, runtimeID string) []reconcile.Request {
	owner, err := Owner(ctx, reader, runtimeID)
	if err != nil || owner == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(owner)}}
}

// Owner returns the Kyma whose push identity a runtime ID is: the oldest
// of the Kymas with that ID (by creation, then namespace and name), nil
// when there is none. Why one: a runtime's certificate names only the ID,
// so events of a second Kyma's runtime with the same ID would reconcile
// the first Kyma too; the second gets no push identity instead.
func Owner(ctx context.Context, reader client.Reader, runtimeID string) (*v1beta2.Kyma, error) {
	var list v1beta2.KymaList
	if err := reader.List(ctx, &list, client.MatchingFields{KymaRuntimeID: runtimeID}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Kymas of runtime %s: %w", runtimeID, err)
	}
	var owner *v1beta2.Kyma
	for i := range list.Items {
		if k := &list.Items[i]; owner == nil || olderThan(k, owner) {
			owner = k
		}
	}
	return owner, nil
}

func olderThan(a, b *v1beta2.Kyma) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// ManifestsOf returns the Manifests that placed the event's object in the
// event's runtime, of the Kyma that owns the runtime ID.
func ManifestsOf(ctx context.Context, reader client.Reader, ev event.Event) []reconcile.Request {
	k, err := Owner(ctx, reader, ev.RuntimeID)
	if err != nil || k == nil {
		return nil
	}
	var out []reconcile.Request
	for _, ns := range []string{ev.Object.Namespace, anyNamespace} {
		var list v1beta2.ManifestList
		key := objectKey(k.Name, ev.GVK.Group, ev.GVK.Kind, ns, ev.Object.Name)
		if err := reader.List(ctx, &list, client.InNamespace(k.Namespace), client.MatchingFields{ManifestObjects: key},
			client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		for _, mf := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: mf.Namespace, Name: mf.Name}})
		}
	}
	return out
}
