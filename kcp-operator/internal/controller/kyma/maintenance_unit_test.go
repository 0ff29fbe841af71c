package kyma

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestMaintenanceWakesHeldKymas checks the two wake-ups of a held Kyma: at
// the begin of its window, and when the policy changes (it may open the
// window, or mend a broken policy), without waiting for a resync.
func TestMaintenanceWakesHeldKymas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`default: {days: [Sat], begin: "20:00", end: "23:00"}`), 0o600))
	m := NewMaintenance(path, logr.Discard())
	m.poll = 20 * time.Millisecond
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer queue.ShutDown()
	require.NoError(t, m.Start(t.Context(), queue))

	atWindow := types.NamespacedName{Namespace: "kcp-system", Name: "at-window"}
	begin := time.Now().Add(300 * time.Millisecond)
	m.hold(atWindow, begin)
	m.hold(atWindow, begin.Add(time.Hour)) // a later hold does not postpone it
	assert.Zero(t, queue.Len(), "not before its window")
	require.Eventually(t, func() bool { return queue.Len() == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.False(t, time.Now().Before(begin), "woken at the begin of its window")
	got, _ := queue.Get()
	assert.Equal(t, atWindow, got.NamespacedName)
	queue.Done(got)

	onChange := types.NamespacedName{Namespace: "kcp-system", Name: "on-change"}
	m.hold(onChange, time.Time{})
	assert.Never(t, func() bool { return queue.Len() > 0 }, 5*m.poll, m.poll/2, "an unchanged policy wakes no one")
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.WriteFile(path, []byte(`default: {days: [Sun], begin: "20:00", end: "23:00"}`), 0o600))
	require.NoError(t, os.Chtimes(path, later, later))
	require.Eventually(t, func() bool { return queue.Len() == 2 }, 5*time.Second, 10*time.Millisecond,
		"every Kyma held since the last change is woken")
	woken := map[types.NamespacedName]bool{}
	for range 2 {
		got, _ = queue.Get()
		woken[got.NamespacedName] = true
		queue.Done(got)
	}
	assert.Equal(t, map[types.NamespacedName]bool{atWindow: true, onChange: true}, woken)
	assert.Never(t, func() bool { return queue.Len() > 0 }, 5*m.poll, m.poll/2, "woken once per change")
}
