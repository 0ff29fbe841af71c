package event

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The contracts (first path segment) that agents speak. Both carry the same
// body; the contract is kept on the event for consumers that care.
const (
	ContractV1 = "v1"
	ContractV2 = "v2"
)

// IsContract reports whether s names a contract the listener accepts.
func IsContract(s string) bool { return s == ContractV1 || s == ContractV2 }

// Event is one accepted change event: a runtime reports that an object it
// watches for a manager changed.
type Event struct {
	// RuntimeID identifies the runtime: the CN of its verified client certificate.
	RuntimeID string
	// Manager is the manager the event was sent to (path segment).
	Manager string
	// Contract is the contract of the request, ContractV1 or ContractV2.
	Contract string
	// Object is the watched object in the runtime; Namespace is empty for
	// cluster-scoped objects.
	Object types.NamespacedName
	// GVK is the kind of the watched object.
	GVK schema.GroupVersionKind
	// Received is when the listener accepted the event; when several events
	// were coalesced into this one, when it accepted the first of them.
	Received time.Time
}

// Key is what coalesces events: while an event is waiting for its consumer,
// further events with the same key are merged into it.
type Key struct {
	Manager   string
	RuntimeID string
	GVK       schema.GroupVersionKind
	Object    types.NamespacedName
}

// Key returns the coalescing key of e.
func (e *Event) Key() Key {
	return Key{Manager: e.Manager, RuntimeID: e.RuntimeID, GVK: e.GVK, Object: e.Object}
}
