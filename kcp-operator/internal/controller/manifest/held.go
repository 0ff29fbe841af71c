package manifest

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// heldStatuses keeps the status that follows an apply in memory until the
// first recheck, when that status would change nothing a crash may lose,
// and a module whose workloads start by the recheck then has its Ready
// status written instead: one status write fewer per install. That is so
// in two cases:
//
//   - recordBefore has written, before the apply, the objects the apply
//     places, and the status records the same objects and created
//     namespaces: it adds only the applied record and the progress.
//   - The stored status records nothing (a first install): all the status
//     would record is the render's, each object placed with the
//     Manifest's ManifestLabel and each namespace it created with its
//     CreatedByAnnotation, which is what deletion finds without a status
//     (inventory), as it does for a first apply that stopped part way.
//
// A restart of the operator in that window loses the applied record only:
// the next reconcile applies the same objects again, and nothing is left
// that deletion does not find. Any other status — one that records other
// objects or namespaces than the record before it, a refusal, a prune —
// is written at once.
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

// hold keeps status for mf when status is still Processing after an apply
// and mf's stored status either is the record written before the apply,
// recording the same objects and namespaces, or records nothing yet. A
// held status is held only once.
func (h *heldStatuses) hold(mf *v1beta2.Manifest, status v1beta2.ManifestStatus) bool {
	if status.State != shared.StateProcessing || status.Applied == "" {
		return false
	}
	if !nothingRecorded(mf) && (!recordedFirst(mf.Status) || !sameHoldings(mf.Status, status)) {
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
