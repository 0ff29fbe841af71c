package enqueue_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/kcp-operator/internal/enqueue"
)

// TestBackgroundWaitsBehindOrdinaryWork checks that fan-out work is handed
// out after requests of default priority that came later.
func TestBackgroundWaitsBehindOrdinaryWork(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	t.Cleanup(q.ShutDown)
	release := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "released"}}
	edited := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kcp-system", Name: "edited"}}
	enqueue.Background(q, release, 0)
	q.Add(edited)

	first, _, _ := q.GetWithPriority()
	second, priority, _ := q.GetWithPriority()
	assert.Equal(t, edited, first)
	assert.Equal(t, release, second)
	assert.Equal(t, handler.LowPriority, priority)
}
