package listener_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/pkitest"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
)

const (
	floodFactorEnv = "LISTENER_FLOOD_FACTOR" // the flooder's offered load in times its limit, default 10
	// fairnessRuntimes send at fairnessRate each, 2,000 events/s in all:
	// far busier than a normal runtime, so that a run gathers enough
	// samples, yet within the default limit.
	fairnessRuntimes = 100
	fairnessRate     = 20.0
	// fairnessWindow is how long the flood is on, then off, in turn.
	fairnessWindow = time.Second
)

// BenchmarkFairness measures what one flooding runtime does to the others:
// 100 runtimes, each with its own certificate and keep-alive mTLS
// connection, send b.N events in all at a steady 20 events/s each, while
// one more runtime offers ten times its limit (LISTENER_FLOOD_FACTOR),
// ignoring Retry-After, in every other second. Quiet and flooded seconds
// alternate so that both see the same background load of a shared
// machine; each event counts for the condition at the moment it was sent.
// The limits are the defaults. Latency runs from the moment a client
// sends an event to the moment the consumer has it. Everything runs in
// this process: 101 connections need no child process, and the delivery
// time is taken on the same clock as the send time.
func BenchmarkFairness(b *testing.B) {
	factor := 10.0
	if v := os.Getenv(floodFactorEnv); v != "" {
		var err error
		if factor, err = strconv.ParseFloat(v, 64); err != nil {
			b.Fatalf("%s: %v", floodFactorEnv, err)
		}
	}
	ca := pkitest.NewCA(b, "kcp-ca")
	srv, ln := newBenchServer(b, listener.Config{
		Managers: []string{manager}, KeyPair: ca.Server().KeyPair(b), ClientCAs: ca.Bundle(),
		Registerer: prometheus.NewRegistry(), Log: logr.Discard(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Serve(ctx, ln) }()
	perRuntime := (b.N + fairnessRuntimes - 1) / fairnessRuntimes
	tr := newTracker(fairnessRuntimes * perRuntime)
	go func() { _ = srv.Consume(ctx, manager, tr.deliver) }()
	for !srv.HasConsumer(manager) {
		time.Sleep(time.Millisecond)
	}
	url := "https://" + ln.Addr().String() + "/v2/klm/event"
	clients := make([]*http.Client, fairnessRuntimes)
	for i := range clients {
		leaf := ca.Client(fmt.Sprintf("rt-%d", i))
		clients[i] = mtlsClient(b, ca, &leaf)
		require.Equal(b, http.StatusOK, sendEvent(clients[i], url, []byte(eventBody("warm-up"))))
	}
	flooderLeaf := ca.Client("rt-flooder")

	b.ResetTimer()
	var run fairnessRun
	flooding, stopAlternating := alternate(fairnessWindow)
	stopFlood := flood(mtlsClient(b, ca, &flooderLeaf), url, factor*listener.DefaultRuntimeEventRate, &run, flooding)
	tr.send(clients, url, perRuntime, flooding)
	stopFlood()
	w := stopAlternating()
	b.StopTimer()

	lost := tr.await(10 * time.Second)
	b.ReportMetric(tr.percentile(false, 0.5), "normal-p50-ms")
	b.ReportMetric(tr.percentile(false, 0.99), "normal-p99-ms")
	b.ReportMetric(tr.percentile(true, 0.5), "flood-p50-ms")
	b.ReportMetric(tr.percentile(true, 0.99), "flood-p99-ms")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(run.accepted.Load()+run.refused.Load())/w.wall[1].Seconds(), "flood-offered/s")
	b.ReportMetric(float64(run.accepted.Load())/w.wall[1].Seconds(), "flood-accepted/s")
	// Process CPU (server and all clients) per second of each condition.
	b.ReportMetric(float64(w.cpu[0].Milliseconds())/w.wall[0].Seconds(), "normal-cpu-ms/s")
	b.ReportMetric(float64(w.cpu[1].Milliseconds())/w.wall[1].Seconds(), "flood-cpu-ms/s")
}

// windows are the time and this process's CPU time spent with the flood
// off and on.
type windows struct {
	wall, cpu [2]time.Duration // index 1: flood on
}

// alternate turns the returned flag on and off every window, starting
// off; stop ends that and returns the time spent in each condition.
func alternate(window time.Duration) (flag *atomic.Bool, stop func() windows) {
	flag = &atomic.Bool{}
	quit, done := make(chan struct{}), make(chan windows)
	go func() {
		tick := time.NewTicker(window)
		defer tick.Stop()
		var w windows
		since, cpuSince := time.Now(), cpuTime()
		account := func(now time.Time) {
			cpu, on := cpuTime(), 0
			if flag.Load() {
				on = 1
			}
			w.wall[on] += now.Sub(since)
			w.cpu[on] += cpu - cpuSince
			since, cpuSince = now, cpu
		}
		for {
			select {
			case <-quit:
				account(time.Now())
				done <- w
				return
			case now := <-tick.C:
				account(now)
				flag.Store(!flag.Load())
			}
		}
	}()
	return flag, func() windows {
		close(quit)
		return <-done
	}
}

// tracker keeps the send and delivery times of numbered events, as
// nanoseconds since base (0: not yet), and whether the flood was on when
// each was sent.
type tracker struct {
	base      time.Time
	sent      []int64
	flooded   []bool
	delivered []atomic.Int64
	refused   atomic.Int64
}

func newTracker(n int) *tracker {
	return &tracker{
		base: time.Now(), sent: make([]int64, n), flooded: make([]bool, n), delivered: make([]atomic.Int64, n),
	}
}

// deliver is the consumer: it notes the time of the numbered events.
func (tr *tracker) deliver(ev event.Event) {
	if i, err := strconv.Atoi(strings.TrimPrefix(ev.Object.Name, "n-")); err == nil {
		tr.delivered[i].Store(int64(time.Since(tr.base)))
	}
}

// send lets every client send perRuntime numbered events at fairnessRate,
// the clients' schedules staggered over one interval.
func (tr *tracker) send(clients []*http.Client, url string, perRuntime int, flooding *atomic.Bool) {
	interval := time.Duration(float64(time.Second) / fairnessRate)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			due := start.Add(interval * time.Duration(i) / time.Duration(len(clients)))
			for k := range perRuntime {
				time.Sleep(time.Until(due)) // pacing: a steady rate, not a burst
				due = due.Add(interval)
				n := i*perRuntime + k
				tr.flooded[n] = flooding.Load()
				tr.sent[n] = int64(time.Since(tr.base))
				if sendEvent(c, url, []byte(eventBody("n-"+strconv.Itoa(n)))) != http.StatusOK {
					tr.refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
}

// await waits up to timeout for the accepted events to be delivered and
// returns how many events were not: refused, or lost after acceptance.
func (tr *tracker) await(timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		missing := 0
		for i := range tr.delivered {
			if tr.delivered[i].Load() == 0 {
				missing++
			}
		}
		if int64(missing) == tr.refused.Load() || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// percentile is the q-quantile of the delivery latency, in milliseconds,
// of the delivered events sent with the flood on or off; NaN without any.
func (tr *tracker) percentile(flooded bool, q float64) float64 {
	var all []time.Duration
	for i := range tr.delivered {
		if d := tr.delivered[i].Load(); d != 0 && tr.flooded[i] == flooded {
			all = append(all, time.Duration(d-tr.sent[i]))
		}
	}
	if len(all) == 0 {
		return math.NaN()
	}
	slices.Sort(all)
	return float64(all[min(len(all)-1, int(q*float64(len(all))))].Microseconds()) / 1000
}
