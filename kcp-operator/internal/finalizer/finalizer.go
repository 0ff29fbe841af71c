package finalizer

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Patch applies mutate to obj and writes the difference as a merge patch
// that fails with a conflict when obj is not the stored version. mutate may
// change labels and annotations as well.
func Patch(ctx context.Context, c client.Client, obj client.Object, mutate func()) error {
	base := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	mutate()
	if err := c.Patch(ctx, obj, base); err != nil {
		return fmt.Errorf("patching the finalizers of %s: %w", obj.GetName(), err)
	}
	return nil
}

// Remove removes names from obj's finalizers; an object that is gone
// already is fine. On a conflict it reads obj again and retries at once:
// a removal is the last step of a cleanup that is done, and repeating the
// cleanup for a stale copy would only delay it.
func Remove(ctx context.Context, c client.Client, obj client.Object, names ...string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := Patch(ctx, c, obj, func() {
			for _, n := range names {
				controllerutil.RemoveFinalizer(obj, n)
			}
		})
		if apierrors.IsConflict(err) {
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); gerr != nil {
				return gerr
			}
		}
		return err
	})
	return client.IgnoreNotFound(err)
}
