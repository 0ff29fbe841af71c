package fleet

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// boundFieldOwner is the bare client's field manager with --bound-apply.
const boundFieldOwner = "scale-bound"

// boundWriter makes the bounds' writes: with create and update, the
// cheapest verbs for the API server, or (apply) with server-side apply, as
// the operator writes. The second tells how much of the operator's distance
// to the bound is the verb: the operator needs apply's field ownership to
// update what it installed, a bare client does not.
type boundWriter struct {
	apply bool
}

// create writes a new object.
func (w boundWriter) create(ctx context.Context, c client.Client, o client.Object) error {
	if !w.apply {
		return c.Create(ctx, o)
	}
	u, err := applyBody(c, o)
	if err != nil {
		return err
	}
	delete(u.Object, "status")
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(boundFieldOwner)); err != nil {
		return err
	}
	if uo, ok := o.(*unstructured.Unstructured); ok {
		uo.Object = u.Object
		return nil
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o)
}

// status writes o's status; byKubelet marks a status that a kubelet
// updates (it does not apply), which stays an update.
func (w boundWriter) status(ctx context.Context, c client.Client, o client.Object, byKubelet bool) error {
	if !w.apply || byKubelet {
		return c.Status().Update(ctx, o)
	}
	u, err := applyBody(c, o)
	if err != nil {
		return err
	}
	body := &unstructured.Unstructured{Object: map[string]any{"status": u.Object["status"]}}
	body.SetGroupVersionKind(u.GroupVersionKind())
	body.SetNamespace(u.GetNamespace())
	body.SetName(u.GetName())
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(body), client.FieldOwner(boundFieldOwner))
}

// applyBody is o as an apply request's body: with its kind, without what
// the API server set.
func applyBody(c client.Client, o client.Object) (*unstructured.Unstructured, error) {
	gvk, err := c.GroupVersionKindFor(o)
	if err != nil {
		return nil, fmt.Errorf("the kind of %T: %w", o, err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", o, err)
	}
	dropNulls(m)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	u.SetManagedFields(nil)
	u.SetResourceVersion("")
	u.SetUID("")
	u.SetCreationTimestamp(metav1.Time{})
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// dropNulls removes the null fields of typed zero values (a zero time
// converts to null), which an apply request would mean as "remove" and a
// CRD's schema rejects.
func dropNulls(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(v)
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					dropNulls(em)
				}
			}
		}
	}
}
