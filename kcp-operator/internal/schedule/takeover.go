package schedule

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// TakenOver reports whether the Kyma controller has taken kyma over: its
// first reconcile puts the finalizer and the last-synced spec on it in one
// write.
//
// The catalog and agent controllers act only on Kymas taken over, so that
// they follow the Kyma controller's order through a fleet of new Kymas
// instead of walking it in orders of their own: a Kyma is Ready only when
// all three are done with it, and three orders left most Kymas two-thirds
// done until the end of a rollout.
func TakenOver(kyma *v1beta2.Kyma) bool {
	_, synced := kyma.Annotations[shared.LastSyncedSpecAnnotation]
	return synced && controllerutil.ContainsFinalizer(kyma, shared.KymaFinalizer)
}

// TakenOverKymas lets through events of Kymas taken over: creations and
// updates of those, with their spec or labels changed or just taken over.
func TakenOverKymas() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return isTakenOver(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, okOld := e.ObjectOld.(*v1beta2.Kyma)
			n, okNew := e.ObjectNew.(*v1beta2.Kyma)
			if !okOld || !okNew || !TakenOver(n) {
				return false
			}
			return !TakenOver(o) || o.Generation != n.Generation || !maps.Equal(o.Labels, n.Labels)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(e event.GenericEvent) bool { return isTakenOver(e.Object) },
	}
}

func isTakenOver(o any) bool {
	k, ok := o.(*v1beta2.Kyma)
	return ok && TakenOver(k)
}
