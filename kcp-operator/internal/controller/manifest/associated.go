package manifest

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
)

// associatedPage bounds the objects of one associated kind read per
// reconcile: enough to tell what the deletion waits for.
const associatedPage = 100

// leftOfKinds is what is left in the runtime of the module's associated kinds.
type leftOfKinds struct {
	// terminating objects are being deleted; foreign ones are not, and the
	// operator does not delete them.
	terminating, foreign []string
	more                 bool
}

// waitForAssociated deletes what the module applied of its associated
// kinds, under the removal rules like all its objects, and reports the
// objects of those kinds still in the runtime, in every namespace (they are
// typically the CRs users created wherever they work). Objects that are
// not the module's are never deleted: they are someone's data, which the
// deletion waits for, as it waits for users' CRs of the module's own CRDs.
// A nil observation means nothing is left.
func (r *Reconciler) waitForAssociated(ctx context.Context, mf *v1beta2.Manifest, rt *remote.Runtime, module removal.Module,
	applied []shared.Resource) (*observation, error) {
	if len(mf.Spec.AssociatedResources) == 0 {
		return nil, nil
	}
	kinds := map[schema.GroupKind]bool{}
	for _, gvk := range mf.Spec.AssociatedResources {
		kinds[schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}] = true
	}
	var own []shared.Resource
	for _, res := range applied {
		if kinds[schema.GroupKind{Group: res.Group, Kind: res.Kind}] {
			own = append(own, res)
		}
	}
	if len(own) > 0 {
		if _, err := r.Removal.Delete(ctx, rt, module, own); err != nil {
			return nil, fmt.Errorf("deleting the module's objects of its associated kinds: %w", err)
		}
	}
	left, err := associatedLeft(ctx, rt, mf.Spec.AssociatedResources)
	if err != nil {
		return nil, err
	}
	return left.observation(), nil
}

// associatedLeft lists the objects of the kinds; a kind the runtime does
// not serve has none.
func associatedLeft(ctx context.Context, rt *remote.Runtime, kinds []metav1.GroupVersionKind) (leftOfKinds, error) {
	var left leftOfKinds
	for _, k := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind + "List"})
		err := rt.List(ctx, list, client.Limit(associatedPage))
		switch {
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			log.FromContext(ctx).Info("the runtime does not serve an associated kind of the module: nothing of it to wait for",
				"kind", schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}.String())
			continue
		case err != nil:
			return left, fmt.Errorf("listing the module's associated %s: %w", k.Kind, err)
		}
		left.more = left.more || list.Continue != ""
		for i := range list.Items {
			item := &list.Items[i]
			name := removal.DescribeResource(shared.Resource{Name: item.Name, Namespace: item.Namespace,
				GroupVersionKind: metav1.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}})
			if item.DeletionTimestamp.IsZero() {
				left.foreign = append(left.foreign, name)
			} else {
				left.terminating = append(left.terminating, name)
			}
		}
	}
	return left, nil
}

// observation says what the deletion waits for: Warning while objects
// nobody deletes remain (someone has to), else Deleting.
func (l leftOfKinds) observation() *observation {
	switch {
	case len(l.foreign) > 0:
		msg := "deletion waits for objects of the module's associated kinds, which the lifecycle manager does not delete: " +
			named(append(l.foreign, l.terminating...), l.more)
		obs := &observation{state: shared.StateWarning, message: msg, keepSynced: true}
		obs.conditions = []metav1.Condition{condition(v1beta2.ConditionInstallation, false, "DeletionBlocked", msg)}
		return obs
	case len(l.terminating) > 0:
		return deleting("waiting for objects of the module's associated kinds to be deleted: " + named(l.terminating, l.more))
	default:
		return nil
	}
}

// named lists up to maxBlockersNamed names, and says when there are more.
func named(names []string, more bool) string {
	out := strings.Join(names[:min(len(names), maxBlockersNamed)], ", ")
	if more || len(names) > maxBlockersNamed {
		out += " and more"
	}
	return out
}
