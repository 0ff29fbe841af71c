package push

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func TestTrackerMergesMarksIntoOneHop(t *testing.T) {
	key := types.NamespacedName{Namespace: "kcp", Name: "a"}
	t0 := time.Now().Add(-time.Second)
	tests := []struct {
		name         string
		marks        []time.Time
		wantHop      bool
		wantReceived time.Time
		wantLatest   time.Time
	}{
		{name: "no event, no hop"},
		{name: "one event", marks: []time.Time{t0}, wantHop: true, wantReceived: t0, wantLatest: t0},
		{name: "a later event merged into a waiting reconcile keeps the earliest as latency",
			marks: []time.Time{t0, t0.Add(time.Millisecond)}, wantHop: true, wantReceived: t0, wantLatest: t0.Add(time.Millisecond)},
		{name: "events marked out of order",
			marks: []time.Time{t0.Add(2 * time.Millisecond), t0}, wantHop: true, wantReceived: t0.Add(2 * time.Millisecond), wantLatest: t0.Add(2 * time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := NewTracker(prometheus.NewRegistry())
			require.NoError(t, err)
			for _, m := range tt.marks {
				tr.Mark(key, m)
			}
			tr.Started(key)
			hop, ok := tr.Last(key)
			require.Equal(t, tt.wantHop, ok)
			if !ok {
				return
			}
			assert.Equal(t, tt.wantReceived, hop.Received)
			assert.Equal(t, tt.wantLatest, hop.Latest)
			assert.False(t, hop.Reconciled.Before(hop.Latest))

			tr.Started(key) // a recheck without a new event measures nothing
			again, _ := tr.Last(key)
			assert.Equal(t, hop, again)
		})
	}
}

// TestTrackerMemoryStaysFlatUnderChurn: an hour of Kymas that get events
// and go, most before their reconcile started, leaves only what the last
// TrackerMaxAge and a half brought.
func TestTrackerMemoryStaysFlatUnderChurn(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, err := NewTracker(prometheus.NewRegistry(), WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	const perSecond = 3
	bound := perSecond * int((TrackerMaxAge+TrackerMaxAge/2)/time.Second+1)
	peak := 0
	for s := range 3600 {
		now = now.Add(time.Second)
		for i := range perSecond {
			key := types.NamespacedName{Namespace: "kcp", Name: fmt.Sprintf("kyma-%d-%d", s, i)}
			tr.Mark(key, now)
			if i == 0 {
				tr.Started(key) // reconciled; the others were deleted first
			}
		}
		pending, measured := tr.Len()
		peak = max(peak, pending+measured)
	}
	assert.LessOrEqual(t, peak, bound, "of %d keys marked", 3600*perSecond)
	_, ok := tr.Last(types.NamespacedName{Namespace: "kcp", Name: "kyma-3599-0"})
	assert.True(t, ok, "a recent hop is still there")
}

// TestTrackerKeysAreCapped: keys marked faster than they age stop at
// TrackerMaxKeys.
func TestTrackerKeysAreCapped(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, err := NewTracker(prometheus.NewRegistry(), WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	for i := range TrackerMaxKeys + 100 {
		tr.Mark(types.NamespacedName{Namespace: "kcp", Name: fmt.Sprint(i)}, now)
	}
	pending, _ := tr.Len()
	assert.Equal(t, TrackerMaxKeys, pending)
}
