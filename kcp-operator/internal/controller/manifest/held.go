package manifest

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// heldStatuses keeps the status that follows an apply in memory until the
// first recheck, when that status would change nothing a crash may lose.
// recordBefore has written, before the apply, the objects the apply
// places; a status that records the same objects and created namespaces
// adds only the applied record and the progress (Processing), and a
// module whose workloads start by the recheck then has its Ready status
// written instead: one status write fewer per install.
//
// A restart of the operator in that window loses the applied record only:
// the next reconcile applies the same objects again (they are on record
// and carry the module's labels), and nothing is left unrecorded. A status
// that records other objects or namespaces — a refusal, a namespace the
// apply created, a prune — is written at once.
type heldStatuses struct {
	mu   sync.Mutex
	held map[types.NamespacedName]heldStatus
}

type heldStatus struct {
	uid types.UID
	// base is the stored status the held one follows: held only while the
	// API server still has it.
	base   v1beta2.ManifestStatus
	status v1beta2.ManifestStatus
}

// hold keeps status for mf when mf's stored status is the record written
// before the apply, status is still Processing, and both record the same
// objects and namespaces. A held status is held only once.
func (h *heldStatuses) hold(mf *v1beta2.Manifest, status v1beta2.ManifestStatus) bool {
	if status.State != shared.StateProcessing || status.Applied == "" || !recordedFirst(mf.Status) || !sameHoldings(mf.Status, status) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[types.NamespacedName]heldStatus{}
	}
	h.held[keyOf(mf)] = heldStatus{uid: mf.UID, base: *mf.Status.DeepCopy(), status: *status.DeepCopy()}
	return true
}

// restore makes the status held for mf its status while the API server
// still has the one it followed. Any other stored status, or a Manifest of
// another UID under the same name, drops what was held.
func (h *heldStatuses) restore(mf *v1beta2.Manifest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := keyOf(mf)
	held, ok := h.held[key]
	switch {
	case !ok:
	case held.uid != mf.UID || !equality.Semantic.DeepEqual(held.base, mf.Status):
		delete(h.held, key)
	default:
		mf.Status = *held.status.DeepCopy()
	}
}

// pending reports whether mf's status is held, not written: then it is
// written at the next chance even if nothing changed since.
func (h *heldStatuses) pending(mf *v1beta2.Manifest) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	held, ok := h.held[keyOf(mf)]
	return ok && held.uid == mf.UID
}

// drop forgets the status held for the Manifest key: it was written, or the
// Manifest is gone.
func (h *heldStatuses) drop(key types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.held, key)
}

func keyOf(mf *v1beta2.Manifest) types.NamespacedName {
	return types.NamespacedName{Namespace: mf.Namespace, Name: mf.Name}
}
