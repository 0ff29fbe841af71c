// Package requeue holds the resync intervals per state that the controllers
// share, with jitter so that objects created together do not resync together.
package requeue

import (
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/lifecycle-manager/api/shared"
)

// Requeue holds the resync interval per state.
type Requeue struct {
	Success, Busy, Warning, Error time.Duration
	// Jitter adds up to this share of the interval at random, so that Kymas
	// created together do not resync together.
	Jitter float64
}

// After returns the result that resyncs an object in state.
func (q Requeue) After(state shared.State) ctrl.Result {
	var d time.Duration
	switch state {
	case shared.StateReady:
		d = q.Success
	case shared.StateWarning:
		d = q.Warning
	case shared.StateError:
		d = q.Error
	default:
		d = q.Busy
	}
	if q.Jitter > 0 && d > 0 {
		d += time.Duration(rand.Float64() * q.Jitter * float64(d)) //nolint:gosec // spreading load needs no secure randomness
	}
	return ctrl.Result{RequeueAfter: d}
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
