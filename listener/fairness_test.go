package listener_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/listener/event"
)

// clock is a fake time that tests move by hand; it starts now, so that
// certificates issued now are valid by it.
type clock struct{ t atomic.Pointer[time.Time] }

func newClock() *clock {
	c := &clock{}
	now := time.Now()
	c.t.Store(&now)
	return c
}

func (c *clock) Now() time.Time { return *c.t.Load() }

func (c *clock) Advance(d time.Duration) {
	next := c.Now().Add(d)
	c.t.Store(&next)
}

// TestRuntimeOverItsRateAnswers429 drains one runtime's burst while the
// clock stands still: its next event is refused with the wait until its
// bucket holds a token again, in whole seconds, while another runtime at
// the same moment is accepted; once the clock moved by that wait, the
// runtime is accepted again.
func TestRuntimeOverItsRateAnswers429(t *testing.T) {
	tests := []struct {
		name           string
		rate           float64
		burst          int
		wantRetryAfter string
	}{
		{name: "a wait under a second is one second", rate: 3, burst: 2, wantRetryAfter: "1"},
		{name: "rounded up to whole seconds", rate: 0.4, burst: 1, wantRetryAfter: "3"},
		{name: "a very slow rate is capped at a minute", rate: 0.001, burst: 3, wantRetryAfter: "60"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			clk := newClock()
			cfg := f.directConfig(t)
			cfg.RuntimeEventRate, cfg.RuntimeEventBurst, cfg.Now = tc.rate, tc.burst, clk.Now
			srv := start(t, cfg)
			events := consume(t, srv.srv)
			url := "https://" + srv.addr + "/v2/klm/event"
			flooderLeaf, otherLeaf := f.ca.Client("rt-flooder"), f.ca.Client("rt-other")
			flooder, other := mtlsClient(t, f.ca, &flooderLeaf), mtlsClient(t, f.ca, &otherLeaf)

			for i := range tc.burst {
				require.Equal(t, http.StatusOK, post(t, flooder, url, eventBody(fmt.Sprintf("burst-%d", i))).code)
			}
			refused := post(t, flooder, url, eventBody("refused"))
			assert.Equal(t, http.StatusTooManyRequests, refused.code)
			assert.Equal(t, tc.wantRetryAfter, refused.header.Get("Retry-After"))
			assert.Contains(t, refused.body, "event rate")
			assert.Equal(t, http.StatusOK, post(t, other, url, eventBody("same-moment")).code, "another runtime is not limited")

			clk.Advance(time.Duration(float64(time.Second) / tc.rate))
			assert.Equal(t, http.StatusOK, post(t, flooder, url, eventBody("after-the-wait")).code)

			// One queue, delivered in order: once the last event arrived, a
			// refused one that had been taken would have arrived before it.
			want := tc.burst + 2
			require.Eventually(t, func() bool { return len(events.all()) == want }, 5*time.Second, time.Millisecond)
			for _, ev := range events.all() {
				assert.NotEqual(t, "refused", ev.Object.Name)
			}
			throttled := func(reason string) float64 {
				return metric(t, f.reg, "listener_throttled_total", map[string]string{"manager": manager, "reason": reason})
			}
			assert.Equal(t, 1.0, throttled("runtime_rate"))
			assert.Equal(t, 0.0, throttled("queue_full"))
			assert.Equal(t, 1.0, metric(t, f.reg, "listener_requests_total", map[string]string{"manager": manager, "code": "429"}))
		})
	}
}

// TestNegativeRuntimeRateDisablesTheLimit sends far beyond the default
// burst from one runtime at one instant, with the limit off.
func TestNegativeRuntimeRateDisablesTheLimit(t *testing.T) {
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.RuntimeEventRate, cfg.RuntimeEventBurst, cfg.Now = -1, 1, newClock().Now
	srv := start(t, cfg)
	consume(t, srv.srv)
	leaf := f.ca.Client("rt-1")
	c := mtlsClient(t, f.ca, &leaf)
	for i := range 50 {
		require.Equal(t, http.StatusOK, post(t, c, "https://"+srv.addr+"/v2/klm/event", eventBody(fmt.Sprintf("o-%d", i))).code)
	}
}

// fairnessRun is what the runtimes of TestFloodingRuntimeDoesNotStarveOthers got.
type fairnessRun struct {
	accepted, refused, failed atomic.Int64
	floodTime                 time.Duration
	othersNotOK               []string
}

// TestFloodingRuntimeDoesNotStarveOthers lets one runtime send at ten
// times its limit, ignoring Retry-After as a compromised runtime would,
// while 100 other runtimes, each with its own certificate and connection,
// send a burst's worth of events at their rate: none of theirs may
// be refused or lost, and the flooder gets no more than its burst plus its
// rate over the time it flooded.
func TestFloodingRuntimeDoesNotStarveOthers(t *testing.T) {
	const (
		limit  = 5.0 // events/s per runtime: low, so that ten times it is a flood even under -race
		burst  = 5
		others = 100
	)
	f := newFixture(t)
	cfg := f.directConfig(t)
	cfg.RuntimeEventRate, cfg.RuntimeEventBurst = limit, burst
	srv := start(t, cfg)
	events := consume(t, srv.srv)
	url := "https://" + srv.addr + "/v2/klm/event"
	clients := make([]*http.Client, others)
	for i := range clients {
		leaf := f.ca.Client(fmt.Sprintf("rt-%d", i))
		clients[i] = mtlsClient(t, f.ca, &leaf)
	}
	flooderLeaf := f.ca.Client("rt-flooder")
	run := &fairnessRun{}
	stop := flood(mtlsClient(t, f.ca, &flooderLeaf), url, 10*limit, run, nil)
	require.Eventually(t, func() bool { return run.refused.Load() > 0 }, 10*time.Second, time.Millisecond, "the flooder is throttled")

	// A burst's worth each: whatever the timing, no correct limiter refuses them.
	sendSpread(clients, url, burst, time.Second/limit, run)
	stop()

	assert.Empty(t, run.othersNotOK, "events of the other runtimes not answered 200")
	assert.Eventually(t, func() bool {
		byRuntime := deliveredByRuntime(events.all())
		if byRuntime["rt-flooder"] != int(run.accepted.Load()) || len(byRuntime) != others+1 {
			return false
		}
		for _, n := range byRuntime {
			if n < burst {
				return false // a 200 is answered before the consumer takes the event
			}
		}
		return true
	}, 10*time.Second, time.Millisecond, "every accepted event is delivered")
	for id, n := range deliveredByRuntime(events.all()) {
		if id != "rt-flooder" {
			assert.Equal(t, burst, n, "events of %s delivered", id)
		}
	}
	accepted, refused := run.accepted.Load(), run.refused.Load()
	t.Logf("flooder: %d accepted, %d refused, %d failed in %s (%.0f requests/s)", accepted, refused, run.failed.Load(),
		run.floodTime, float64(accepted+refused)/run.floodTime.Seconds())
	assert.Zero(t, run.failed.Load(), "flooder requests without an answer")
	assert.GreaterOrEqual(t, accepted, int64(burst), "a full bucket lets a burst through")
	// The server's clock ran within the flooder's window, so this holds
	// exactly; the 1 is for rounding.
	assert.LessOrEqual(t, float64(accepted), burst+limit*run.floodTime.Seconds()+1)
	throttled := func(reason string) float64 {
		return metric(t, f.reg, "listener_throttled_total", map[string]string{"manager": manager, "reason": reason})
	}
	assert.Equal(t, float64(refused), throttled("runtime_rate"))
	assert.Equal(t, 0.0, throttled("queue_full"))
}

// flood sends events for distinct objects at perSecond from several
// connections (so that a slow answer does not slow the flood) until the
// returned stop is called, counting the answers in run; stop returns when
// the last answer is in and run.floodTime is set. While gate (when not
// nil) is false, the flooder skips its turns.
func flood(c *http.Client, url string, perSecond float64, run *fairnessRun, gate *atomic.Bool) (stop func()) {
	const workers = 4
	tr, _ := c.Transport.(*http.Transport)
	tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost = workers, workers
	quit := make(chan struct{})
	var wg sync.WaitGroup
	var next atomic.Int64
	start := time.Now()
	interval := time.Duration(float64(time.Second) / perSecond)
	for range workers {
		wg.Go(func() {
			for {
				n := next.Add(1) - 1
				due := time.NewTimer(time.Until(start.Add(time.Duration(n) * interval)))
				select {
				case <-quit:
					due.Stop()
					return
				case <-due.C:
				}
				if gate != nil && !gate.Load() {
					continue
				}
				switch sendEvent(c, url, []byte(eventBody(fmt.Sprintf("flood-%d", n)))) {
				case http.StatusOK:
					run.accepted.Add(1)
				case http.StatusTooManyRequests:
					run.refused.Add(1)
				default:
					run.failed.Add(1)
				}
			}
		})
	}
	return func() {
		close(quit)
		wg.Wait()
		run.floodTime = time.Since(start)
	}
}

// sendSpread lets every client send n events, one per interval, all at
// once, and notes in run each answer that is not 200.
func sendSpread(clients []*http.Client, url string, n int, interval time.Duration, run *fairnessRun) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for k := range n {
				if k > 0 {
					<-tick.C
				}
				if code := sendEvent(c, url, []byte(eventBody(fmt.Sprintf("rt-%d-%d", i, k)))); code != http.StatusOK {
					mu.Lock()
					run.othersNotOK = append(run.othersNotOK, fmt.Sprintf("rt-%d event %d: %d", i, k, code))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

// deliveredByRuntime counts delivered events by runtime; every event names
// its own object, so coalescing would show as a shortfall.
func deliveredByRuntime(evs []event.Event) map[string]int {
	out := map[string]int{}
	for _, ev := range evs {
		out[ev.RuntimeID]++
	}
	return out
}
