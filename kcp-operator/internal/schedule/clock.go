package schedule

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// pacedClock is a clock that runs at a pace against the wall clock. Its
// zero value runs with the wall clock.
type pacedClock struct {
	// From wall time since, the clock reads base plus the wall time
	// passed times pace.
	since, base time.Time
	pace        float64
}

// at is the clock's time at wall time wall.
func (c *pacedClock) at(wall time.Time) time.Time {
	if c.since.IsZero() {
		return wall
	}
	return c.base.Add(time.Duration(float64(wall.Sub(c.since)) * c.pace))
}

// wall is the wall-clock time that d of the clock takes at its pace.
func (c *pacedClock) wall(d time.Duration) time.Duration {
	if c.since.IsZero() {
		return d
	}
	return time.Duration(float64(d) / c.pace)
}

func (c *pacedClock) setPace(wall time.Time, pace float64) {
	c.base, c.since, c.pace = c.at(wall), wall, pace
}

// dueKey is a Kyma to enqueue into q at the Pacer clock's time at.
type dueKey struct {
	at  time.Time
	key types.NamespacedName
	q   workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// dueHeap orders dueKeys by time; it implements heap.Interface.
type dueHeap []dueKey

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueKey)) }
func (h *dueHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = dueKey{}
	*h = old[:len(old)-1]
	return d
}
