package manifest

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// heldStatuses keeps the first status of a new install until its first
// recheck instead of writing it. A module applied a moment ago is waiting
// for its workloads, and a kubelet that starts them by that recheck makes
// its Manifest Ready with one status write instead of two (Processing,
// then Ready): at 10,000 runtimes × 5 modules that is 50,000 KCP writes.
// The Kyma shows a module without a status as Processing all the same.
//
// The held status is what every later step reads as the Manifest's status
// (restore): the applied record and the objects the module holds, so a
// spec change or a deletion before the write prunes and deletes them as if
// it had been written. Only a restart of the operator in that window loses
// it; the next install then renders again and applies what is rendered,
// as after a failed status write.
type heldStatuses struct {
	mu   sync.Mutex
	held map[types.NamespacedName]heldStatus
}

type heldStatus struct {
	uid    types.UID
	status v1beta2.ManifestStatus
}

// hold keeps status for mf when it is the first status of an install under
// way: nothing written yet, something applied, still Processing. Any other
// status is written at once, and a held one is held only once.
func (h *heldStatuses) hold(mf *v1beta2.Manifest, status v1beta2.ManifestStatus) bool {
	if mf.Status.State != "" || status.State != shared.StateProcessing || status.Applied == "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[types.NamespacedName]heldStatus{}
	}
	h.held[keyOf(mf)] = heldStatus{uid: mf.UID, status: *status.DeepCopy()}
	return true
}

// restore makes the status held for mf its status, when the API server
// still has none. A status found stored, or a Manifest of another UID
// under the same name, drops what was held.
func (h *heldStatuses) restore(mf *v1beta2.Manifest) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := keyOf(mf)
	held, ok := h.held[key]
	switch {
	case !ok:
	case held.uid != mf.UID || mf.Status.State != "":
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
