package schedule_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
)

// recordingQueue is a fake priority queue that records what is added, so
// that the options a handler passes can be checked without waiting.
type recordingQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	added []priorityqueue.AddOpts
}

func (q *recordingQueue) AddWithOpts(o priorityqueue.AddOpts, _ ...reconcile.Request) {
	q.added = append(q.added, o)
}

// recordingPlainQueue is the same for a queue without priorities.
type recordingPlainQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	after []time.Duration
}

func (q *recordingPlainQueue) AddAfter(_ reconcile.Request, d time.Duration) {
	q.after = append(q.after, d)
}

func TestSettledDelaysAndKeepsPriority(t *testing.T) {
	const settle = 2 * time.Second
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "kyma-1"}}
	add := handler.Funcs{UpdateFunc: func(_ context.Context, _ event.UpdateEvent, q schedule.Queue) { q.Add(req) }}
	addLater := handler.Funcs{UpdateFunc: func(_ context.Context, _ event.UpdateEvent, q schedule.Queue) { q.AddAfter(req, time.Minute) }}
	tests := []struct {
		name string
		h    handler.EventHandler
		old  string // resource version before the update; equal to the new one is a resync
		want priorityqueue.AddOpts
	}{
		{"an add waits", add, "1", priorityqueue.AddOpts{After: settle}},
		{"a longer wait stays", addLater, "1", priorityqueue.AddOpts{After: time.Minute}},
		{"a resync keeps its low priority", add, "2", priorityqueue.AddOpts{After: settle, Priority: ptr.To(handler.LowPriority)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &recordingQueue{}
			e := event.UpdateEvent{ObjectOld: manifest(tt.old), ObjectNew: manifest("2")}
			schedule.Settled(handler.WithLowPriorityWhenUnchanged(tt.h), settle).Update(t.Context(), e, q)
			assert.Equal(t, []priorityqueue.AddOpts{tt.want}, q.added)
		})
	}
	t.Run("a queue without priorities", func(t *testing.T) {
		q := &recordingPlainQueue{}
		e := event.UpdateEvent{ObjectOld: manifest("1"), ObjectNew: manifest("2")}
		schedule.Settled(add, settle).Update(t.Context(), e, q)
		assert.Equal(t, []time.Duration{settle}, q.after)
	})
}

// TestSettledBurstIsOneRequest checks, on the real priority queue, that
// the changes of a burst join the first one's request instead of each
// making the request ready again.
func TestSettledBurstIsOneRequest(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	t.Cleanup(q.ShutDown)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "kyma-1"}}
	h := schedule.Settled(handler.Funcs{UpdateFunc: func(_ context.Context, _ event.UpdateEvent, q schedule.Queue) {
		q.Add(req)
	}}, time.Hour)
	for rv := range 5 {
		h.Update(t.Context(), event.UpdateEvent{ObjectOld: manifest("0"), ObjectNew: manifest(string(rune('1' + rv)))}, q)
	}
	assert.Zero(t, q.Len(), "nothing is ready before the burst settled")
	q.AddWithOpts(priorityqueue.AddOpts{}, req) // e.g. the Kyma's own change, not settled
	assert.Equal(t, 1, q.Len(), "an add that is not settled makes the waiting request ready")
}

func manifest(resourceVersion string) *v1beta2.Manifest {
	return &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "m", ResourceVersion: resourceVersion}}
}
