package main_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxReviewBytes is the agent's default --max-review-bytes.
const maxReviewBytes = 8 << 20

const overloadedSample = `skr_agent_admission_requests_total{decision="overloaded",operation="unknown"}`

// TestSlowClientsDoNotExhaustMemory opens 64 connections to the real
// binary that announce a review of the largest size and then send nothing
// (half of them) or a byte every 250 ms (the other half). The agent's heap
// stays far below what they announced (64 × 8 MiB), and a normal review
// meanwhile is allowed; when the slots are all taken, it is answered 503,
// counted, and the resync that covers it reaches the KCP.
func TestSlowClientsDoNotExhaustMemory(t *testing.T) {
	const (
		silent, trickling = 32, 32
		heapLimit         = 64 << 20
	)
	tests := []struct {
		name    string
		args    []string
		holding int // slow reviews still in progress once the others are turned away
		want    int // the normal review's status
	}{
		{"within the limits: the review is allowed", nil, silent + trickling, http.StatusOK},
		{"every slot taken: the review is counted and resynced", []string{"--max-concurrent-reviews=16"}, silent + 16, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := startAgent(t, kcpHealthy, tt.args...)
			openSlowClients(t, p, silent, trickling)

			var peak atomic.Uint64
			never := assert.Never(t, func() bool {
				heap := uint64(p.metric(t, "go_memstats_heap_inuse_bytes"))
				if heap > peak.Load() {
					peak.Store(heap)
				}
				return heap >= heapLimit
			}, 2*time.Second, 50*time.Millisecond)
			t.Logf("heap in use with %d slow clients open: at most %.1f MiB", silent+trickling, float64(peak.Load())/(1<<20))
			require.True(t, never, "heap in use reached %.1f MiB", float64(peak.Load())/(1<<20))
			require.Eventually(t, func() bool {
				v, _ := p.sample("skr_agent_admission_in_flight")
				return v == float64(tt.holding)
			}, 20*time.Second, 20*time.Millisecond, "the slow clients' reviews are in progress")
			assert.Less(t, p.metric(t, "go_memstats_heap_inuse_bytes"), float64(heapLimit), "with every slow review in progress")

			// Resyncs for the trickling reviews turned away are delivered first.
			require.Eventually(t, func() bool { return p.metric(t, "skr_agent_queue_depth") == 0 }, 20*time.Second, 20*time.Millisecond)
			overloaded, _ := p.sample(overloadedSample)
			resyncs := p.metric(t, "skr_agent_resyncs_total")
			code, out := p.review(t, review("kyma-0"))
			require.Equal(t, tt.want, code, string(out))
			after, _ := p.sample(overloadedSample)
			if tt.want == http.StatusOK {
				assert.Contains(t, string(out), `"allowed":true`)
				assert.Zero(t, after-overloaded)
				require.Eventually(t, func() bool { return p.metric(t, "skr_agent_events_forwarded_total") >= 1 }, 20*time.Second, 20*time.Millisecond)
				return
			}
			assert.InDelta(t, 1, after-overloaded, 0, "the turned-away review is counted")
			require.Eventually(t, func() bool { return p.metric(t, "skr_agent_resyncs_total") == resyncs+1 }, 20*time.Second, 20*time.Millisecond,
				"the KCP gets the resync that stands for the change")
		})
	}
}

// openSlowClients opens HTTP/1.1 connections to the webhook that send the
// headers of a review of the largest size, then nothing (silent) or a
// space every 250 ms (trickling). They stay open until the test ends.
func openSlowClients(tb testing.TB, p *process, silent, trickling int) {
	tb.Helper()
	u, err := url.Parse(p.webhookURL)
	require.NoError(tb, err)
	tlsCfg := p.client.Transport.(*http.Transport).TLSClientConfig.Clone() //nolint:forcetypeassert // startAgent's client
	tlsCfg.NextProtos = []string{"http/1.1"}
	headers := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		u.Path, u.Host, maxReviewBytes)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for i := range silent + trickling {
		conn, err := (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", u.Host)
		require.NoError(tb, err)
		tb.Cleanup(func() { _ = conn.Close() })
		_, err = io.WriteString(conn, headers)
		require.NoError(tb, err)
		if i < silent {
			continue
		}
		wg.Go(func() {
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return // turned away: the agent closed the connection
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
}
