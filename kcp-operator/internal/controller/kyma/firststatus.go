package kyma

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// firstStatuses keeps a new Kyma's first status in memory while it only
// says Processing, for at most --requeue-busy-max, instead of writing it.
// Its modules usually turn Ready within that time, and then the Kyma's
// first write is its Ready status: one KCP write and one runtime write per
// new Kyma instead of two each (the harness's census at 1,000 Kymas: 2,000
// Kyma status writes for 1,000 Kymas). It is the same rule as for the
// progress of a Kyma that is Processing already (statusToWrite): a problem
// (Error, Warning) is written at once, and so is whatever the status says
// once the time is up.
//
// The held status is what every later step reads as the Kyma's status
// (restore), so a module that stops resolving keeps its Manifest as if the
// status had been written. A restart of the operator in that window loses
// it; the next reconcile computes it again.
type firstStatuses struct {
	mu   sync.Mutex
	held map[types.NamespacedName]firstStatus
}

type firstStatus struct {
	uid    types.UID
	status v1beta2.KymaStatus
	since  time.Time
}

// hold keeps status for kyma instead of writing it when kyma has no status
// written yet (or only a held one), status is Processing and the first
// hold is younger than limit. It reports whether it held.
func (f *firstStatuses) hold(kyma *v1beta2.Kyma, status v1beta2.KymaStatus, limit time.Duration, now time.Time) bool {
	if status.State != shared.StateProcessing || limit <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := kymaKey(kyma)
	held, ok := f.held[key]
	if ok && held.uid != kyma.UID {
		delete(f.held, key)
		ok = false
	}
	switch {
	case !ok && kyma.Status.State != "":
		return false // written before: not a first status
	case ok && now.Sub(held.since) >= limit:
		return false
	case !ok:
		held = firstStatus{uid: kyma.UID, since: now}
	}
	if f.held == nil {
		f.held = map[types.NamespacedName]firstStatus{}
	}
	held.status = *status.DeepCopy()
	f.held[key] = held
	return true
}

// restore makes the status held for kyma its status while the API server
// has none; a status found stored, or a Kyma of another UID under the same
// name, drops what was held.
func (f *firstStatuses) restore(kyma *v1beta2.Kyma) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := kymaKey(kyma)
	held, ok := f.held[key]
	switch {
	case !ok:
	case held.uid != kyma.UID || kyma.Status.State != "":
		delete(f.held, key)
	default:
		kyma.Status = *held.status.DeepCopy()
	}
}

// reapply gives kyma the status held for it again when a write of its
// metadata returned it as stored, without a status.
func (f *firstStatuses) reapply(kyma *v1beta2.Kyma) {
	if kyma.Status.State != "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if held, ok := f.held[kymaKey(kyma)]; ok && held.uid == kyma.UID {
		kyma.Status = *held.status.DeepCopy()
	}
}

// pending reports whether kyma's status is held, not written: it is then
// written at the next chance even if it did not change.
func (f *firstStatuses) pending(kyma *v1beta2.Kyma) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	held, ok := f.held[kymaKey(kyma)]
	return ok && held.uid == kyma.UID
}

// left is how long the status of kyma may still be held; 0 when none is.
func (f *firstStatuses) left(kyma *v1beta2.Kyma, limit time.Duration, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	held, ok := f.held[kymaKey(kyma)]
	if !ok || held.uid != kyma.UID {
		return 0
	}
	return max(limit-now.Sub(held.since), 0)
}

// drop forgets what was held for key: it was written, or the Kyma is gone.
func (f *firstStatuses) drop(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, key)
}

func kymaKey(kyma *v1beta2.Kyma) types.NamespacedName {
	return types.NamespacedName{Namespace: kyma.Namespace, Name: kyma.Name}
}
