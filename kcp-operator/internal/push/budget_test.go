package push_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/listener/eventsource"
)

type budgetClock struct{ t time.Time }

func (c *budgetClock) now() time.Time { return c.t }

func newBudget(t *testing.T, perSecond float64, burst int) (*push.Budget, *budgetClock, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := &budgetClock{t: time.Unix(1_000_000, 0)}
	b, err := push.NewBudget(perSecond, burst, reg, c.now)
	require.NoError(t, err)
	return b, c, reg
}

func TestARuntimeBeyondItsBudgetWaitsBehindTheOthers(t *testing.T) {
	b, c, reg := newBudget(t, 2, 3)
	for i := range 3 {
		assert.Equal(t, eventsource.Priority, b.Priority("flood"), "within the burst: %d", i)
	}
	assert.Equal(t, push.OverBudgetPriority, b.Priority("flood"), "beyond the burst")
	assert.Equal(t, eventsource.Priority, b.Priority("calm"), "another runtime has its own budget")
	c.t = c.t.Add(500 * time.Millisecond)
	assert.Equal(t, eventsource.Priority, b.Priority("flood"), "refilled at 2/s")
	assert.Equal(t, push.OverBudgetPriority, b.Priority("flood"))
	n, err := testutil.GatherAndCount(reg, "lifecycle_manager_push_over_budget_total")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	assert.InDelta(t, 2, mfs[0].GetMetric()[0].GetCounter().GetValue(), 0, "requests over the budget")
}

func TestIdleBucketsAreDropped(t *testing.T) {
	b, c, _ := newBudget(t, 10, 5)
	for i := range 5000 {
		b.Priority(fmt.Sprint("runtime-", i))
	}
	assert.Greater(t, b.Len(), 4000)
	c.t = c.t.Add(time.Second) // every bucket is full again
	for i := range 5000 {
		b.Priority(fmt.Sprint("other-", i))
	}
	assert.LessOrEqual(t, b.Len(), 5000, "the first runtimes' buckets, full again, were swept: without, 10,000")
}

func TestNoBudget(t *testing.T) {
	b, err := push.NewBudget(0, 0, prometheus.NewRegistry(), nil)
	require.NoError(t, err)
	assert.Nil(t, b)
	for range 1000 {
		assert.Equal(t, eventsource.Priority, b.Priority("flood"))
	}
	_, err = push.NewBudget(5, 0, prometheus.NewRegistry(), nil)
	assert.ErrorContains(t, err, "burst 0")
}
