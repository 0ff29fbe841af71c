package push

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/lifecycle-manager/listener/eventsource"
)

// Defaults of the budget: far above what a runtime pushes while its admins
// and modules work normally (a module install is a burst of tens of
// events), far below a write loop.
const (
	DefaultRate  = 10.0
	DefaultBurst = 100
)

// OverBudgetPriority is the priority of the requests of a runtime beyond
// its budget: that of background work, such as a release's fan-out.
const OverBudgetPriority = handler.LowPriority

// sweepEvery bounds the buckets kept between sweeps of idle ones.
const sweepEvery = 4096

// Budget holds a token bucket per runtime ID. The zero value is not
// usable; use NewBudget. A nil *Budget gives every request the push priority.
type Budget struct {
	limit rate.Limit
	burst int
	now   func() time.Time
	over  prometheus.Counter

	mu         sync.Mutex
	buckets    map[string]*rate.Limiter
	sinceSweep int
}

// NewBudget returns a budget of perSecond pushed requests per runtime with
// bursts of burst; perSecond <= 0 means no budget (nil). Its counter is
// registered on reg.
func NewBudget(perSecond float64, burst int, reg prometheus.Registerer, now func() time.Time) (*Budget, error) {
	if perSecond <= 0 {
		return nil, nil
	}
	if burst < 1 {
		return nil, fmt.Errorf("push budget: burst %d with a rate of %v/s: want at least 1", burst, perSecond)
	}
	if now == nil {
		now = time.Now
	}
	over := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lifecycle_manager_push_over_budget_total",
		Help: "Pushed requests of runtimes beyond their budget, queued with background priority.",
	})
	if err := reg.Register(over); err != nil {
		return nil, fmt.Errorf("registering the push budget metric: %w", err)
	}
	return &Budget{limit: rate.Limit(perSecond), burst: burst, now: now, over: over, buckets: map[string]*rate.Limiter{}}, nil
}

// Priority spends one request of the runtime's budget and returns the
// queue priority of the request: the push priority within the budget,
// OverBudgetPriority beyond it.
func (b *Budget) Priority(runtimeID string) int {
	if b == nil {
		return eventsource.Priority
	}
	now := b.now()
	b.mu.Lock()
	bucket, ok := b.buckets[runtimeID]
	if !ok {
		b.sweep(now)
		bucket = rate.NewLimiter(b.limit, b.burst)
		b.buckets[runtimeID] = bucket
	}
	allowed := bucket.AllowN(now, 1)
	b.mu.Unlock()
	if allowed {
		return eventsource.Priority
	}
	b.over.Inc()
	return OverBudgetPriority
}

// sweep drops, every sweepEvery new buckets, the buckets that are full
// again: a new one is the same, so memory follows the runtimes that push,
// not every runtime that ever did. The caller holds mu.
func (b *Budget) sweep(now time.Time) {
	b.sinceSweep++
	if b.sinceSweep < sweepEvery {
		return
	}
	b.sinceSweep = 0
	for id, bucket := range b.buckets {
		if bucket.TokensAt(now) >= float64(b.burst) {
			delete(b.buckets, id)
		}
	}
}

// Len is the number of buckets kept, for tests.
func (b *Budget) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buckets)
}
