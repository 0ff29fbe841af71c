package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A manager's counters exist at zero from the start: a dashboard's rate
// over them shows 0 before the first event, not an empty panel.
func TestAddManagerStartsItsCountersAtZero(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	require.NoError(t, err)
	require.NoError(t, m.AddManager("lifecycle-manager", func() int { return 0 }))
	assert.Equal(t, 1, testutil.CollectAndCount(m.Delivered, "listener_events_delivered_total"))
	assert.Equal(t, 1, testutil.CollectAndCount(m.Coalesced, "listener_events_coalesced_total"))
	assert.Equal(t, 2, testutil.CollectAndCount(m.Throttled, "listener_throttled_total"))
	assert.Zero(t, testutil.ToFloat64(m.Coalesced.WithLabelValues("lifecycle-manager")))
}
