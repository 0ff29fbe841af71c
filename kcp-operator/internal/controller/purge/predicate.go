package purge

import (
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// deleting passes only Kymas with a deletion timestamp.
type deleting struct{}

func (deleting) Create(e event.CreateEvent) bool   { return !e.Object.GetDeletionTimestamp().IsZero() }
func (deleting) Update(e event.UpdateEvent) bool   { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }
func (deleting) Delete(event.DeleteEvent) bool     { return false }
func (deleting) Generic(e event.GenericEvent) bool { return !e.Object.GetDeletionTimestamp().IsZero() }
