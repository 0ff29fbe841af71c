package push_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/kcp-operator/internal/push"
)

// churn is an hour of pushed events, one a millisecond apart in 100 ms
// steps: every event names an object never seen before, Kymas come and go
// every minute, and only every other Kyma is reconciled (the others were
// deleted first). It returns the most waits and requests seen at once.
func churn(w *push.Waits, c *clock) (peakWaits, peakRequests int) {
	seq := 0
	for step := range 36000 {
		c.now = c.now.Add(100 * time.Millisecond)
		gen := step / 600 // a new set of Kymas every minute
		for i := range 5 {
			seq++
			req := types.NamespacedName{Namespace: "kcp", Name: fmt.Sprintf("kyma-%d-%d", gen, i)}
			obj := push.Object{
				GroupKind:      schema.GroupKind{Kind: "ConfigMap"},
				NamespacedName: types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("cm-%d", seq)},
			}
			w.Expect(req, obj, "1", c.now) // received now
			if i%2 == 0 && step%10 == 0 {
				w.Take(req) // a reconcile
			}
		}
		peakWaits = max(peakWaits, w.Count())
		peakRequests = max(peakRequests, w.Len())
	}
	return peakWaits, peakRequests
}

type clock struct{ now time.Time }

func newChurnWaits(tb testing.TB) (*push.Waits, *clock) {
	tb.Helper()
	c := &clock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	w, err := push.NewWaits(prometheus.NewRegistry(), "kyma", push.WaitsOptions{Now: func() time.Time { return c.now }})
	require.NoError(tb, err)
	return w, c
}

// TestWaitsStayBoundedUnderChurn: waits of requests that are never
// reconciled age out; an hour of distinct objects leaves at most what two
// MaxAges bring.
func TestWaitsStayBoundedUnderChurn(t *testing.T) {
	w, c := newChurnWaits(t)
	peakWaits, peakRequests := churn(w, c)
	const perSecond = 50 // 5 events every 100 ms
	assert.LessOrEqual(t, peakWaits, 2*perSecond*int(push.DefaultMaxAge/time.Second)+perSecond, "of 180,000 events")
	assert.LessOrEqual(t, peakRequests, 10, "the Kymas of the last minute or two")
}

// TestWaitsPerRequestAreCapped: a runtime naming more objects than a
// reconcile could reread gets no more waits than MaxWaitsPerRequest.
func TestWaitsPerRequestAreCapped(t *testing.T) {
	now := time.Now()
	w, reg := newWaits(t, func() time.Time { return now })
	for i := range push.MaxWaitsPerRequest + 10 {
		w.Expect(req, push.Object{NamespacedName: types.NamespacedName{Name: fmt.Sprint(i)}}, "1", now)
	}
	assert.Equal(t, push.MaxWaitsPerRequest, w.Count())
	assert.InDelta(t, 10, readsOf(t, reg, push.OutcomeDropped), 0)
	w.Take(req)
	assert.Zero(t, w.Count())
}

// BenchmarkWaitsChurn reports the heap after an hour of churn: flat,
// whatever the hour's event count.
func BenchmarkWaitsChurn(b *testing.B) {
	for b.Loop() {
		w, c := newChurnWaits(b)
		churn(w, c)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(w.Count()), "waits")
	}
}
