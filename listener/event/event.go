package event

import (
	"strconv"
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
	// OldResourceVersion is the object's resourceVersion before the write
	// the event reports, when the agent sent it (ours does for updates; the
	// public agent never does). The agent reports a write before the
	// runtime's API server stores it, so a read of the object that still
	// shows this version, or an older one, was made too early. Empty when
	// unknown, and after merging with an event that carried none.
	OldResourceVersion string
}

// Merge folds a later event with the same key into e: e keeps its received
// time and takes the later contract, and the version to wait for is the
// newer one; an event without a version makes the merged one versionless,
// since nothing then says which read is recent enough.
func (e *Event) Merge(later *Event) {
	e.Contract = later.Contract
	e.OldResourceVersion = NewerVersion(e.OldResourceVersion, later.OldResourceVersion)
}

// NewerVersion returns the newer of two pre-write resourceVersions, or ""
// when either is unknown. Resource versions are opaque to clients, but the
// API servers here (etcd revisions) issue increasing decimal numbers; when
// either is not one, the later (b) wins.
func NewerVersion(a, b string) string {
	if a == "" || b == "" {
		return ""
	}
	if VersionNewer(a, b) {
		return a
	}
	return b
}

// VersionNewer reports whether resourceVersion a is known to be newer than
// b: both are decimal numbers and a is the greater one.
func VersionNewer(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x > y
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
