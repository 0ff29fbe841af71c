package schedule

import (
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/api/shared"
)

// Requeue holds the resync interval per state.
type Requeue struct {
	Success, Busy, Warning, Error time.Duration
	// BusyMax is how far the recheck of work under way stretches while its
	// status stays the same: a module that waits for an hour (an image that
	// cannot be pulled) is read once per BusyMax, not once per Busy, so
	// that stuck modules do not crowd out the work that moves. Not above
	// Busy: every recheck after Busy.
	BusyMax time.Duration
	// Jitter adds up to this share of the interval at random, so that Kymas
	// created together do not resync together.
	Jitter float64
	// UnderWay rechecks objects still Processing or Deleting with
	// UnderWayPriority while their status is younger than BusyMax: for a
	// controller whose recheck is how its work finishes (a Manifest waiting
	// for its workloads). Work that has not moved for BusyMax is stuck, and
	// its rechecks wait behind new work. The Kyma controller is told of its
	// Manifests' progress by their watch; giving its fallback recheck
	// priority doubled its status writes at 1,000 Kymas.
	UnderWay bool
}

// UnderWayPriority is the queue priority of a recheck of work under way: a
// module applied and waiting for its workloads, an agent starting. It goes
// before new work of default priority, so that what was started finishes
// before more is started and Ready follows the work done: at 1,000 new
// Kymas the rechecks waited behind every new Manifest's first apply, and a
// third of the Kymas turned Ready in the last 20 seconds. Pushed changes
// (eventsource.Priority) still go first.
const UnderWayPriority = 10

// UnderWay is a recheck of work under way after d.
func UnderWay(d time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: d, Priority: ptr.To(UnderWayPriority)}
}

// After returns the result that resyncs an object in state that just
// changed.
func (q Requeue) After(state shared.State) ctrl.Result { return q.AfterUnchanged(state, 0) }

// AfterUnchanged returns the result that resyncs an object in state whose
// status has stayed the same for unchanged; with UnderWay, objects still
// Processing or Deleting whose status is young are rechecked as work under
// way.
func (q Requeue) AfterUnchanged(state shared.State, unchanged time.Duration) ctrl.Result {
	var d time.Duration
	underWay := false
	switch state {
	case shared.StateReady:
		d = q.Success
	case shared.StateWarning:
		d = q.Warning
	case shared.StateError:
		d = q.Error
	default:
		d, underWay = q.busy(unchanged), true
	}
	if q.Jitter > 0 && d > 0 {
		d += time.Duration(rand.Float64() * q.Jitter * float64(d)) //nolint:gosec // spreading load needs no secure randomness
	}
	if underWay && q.UnderWay && q.young(unchanged) {
		return UnderWay(d)
	}
	return ctrl.Result{RequeueAfter: d}
}

// busy is the recheck of work under way that has not moved for unchanged:
// half that time, between Busy and BusyMax. Work that just started is read
// at Busy, and each recheck of stuck work waits about half as long again
// as the one before.
func (q Requeue) busy(unchanged time.Duration) time.Duration {
	return min(max(unchanged/2, q.Busy), max(q.BusyMax, q.Busy))
}

// young tells work that moves from stuck work: a status that just changed,
// or has stayed the same for less than BusyMax. Only the first recheck
// after a change is young without a BusyMax.
func (q Requeue) young(unchanged time.Duration) bool {
	return unchanged == 0 || unchanged < q.BusyMax
}

// conflictRetry is how soon an object that changed under a write is read
// again: the change is there already, only our copy is old.
const conflictRetry = 250 * time.Millisecond

// OnConflict turns a conflict (someone wrote the object between our read
// and our write) into a quick retry instead of an error: conflicts are
// routine between controllers that share an object, not failures to log
// or to show in a status. Other errors pass through.
func OnConflict(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
