// Package requeue holds the resync intervals per state that the controllers
// share, with jitter so that objects created together do not resync together.
package requeue

import (
	"math/rand/v2"
	"time"

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
