package suite

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// streamEvery is the pace of the runtime admin's writes: slower than the
// push path (tens of milliseconds), so that a caught-up KCP shows the
// latest write between two of them.
const streamEvery = 200 * time.Millisecond

func TestTheStandbyTakesOverAKilledLeaderWithoutLosingAWrite(t *testing.T) {
	if !h.Local {
		t.Skip("the replicas run as processes (local mode)")
	}
	rt := runtime(0)
	step(t, "Given the sample module installed and the push path working")
	ensureKyma(t, rt, harness.SampleModule)

	step(t, "And two operator replicas electing a leader, with the default lease timings, behind a Service that follows the leader's EndpointSlice")
	replicas, err := h.StartReplicas(t.Context(), 2)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, replicas.Stop(context.WithoutCancel(t.Context())), "the single operator is back")
	})
	var leader *harness.Replica
	require.Eventually(t, func() bool { leader = replicas.Leader(t.Context()); return leader != nil }, timeout, 20*time.Millisecond,
		"the leader names itself in the listener Service's EndpointSlice")
	standby := replicas.All[0]
	if standby == leader {
		standby = replicas.All[1]
	}
	assert.Zero(t, acceptedEvents(t.Context(), standby.MetricsAddr), "the standby has accepted no event")

	step(t, "When the runtime admin writes the runtime Kyma every %v and the leader is killed (SIGKILL) in the middle", streamEvery)
	s := startStream(t, rt)
	require.Eventually(t, func() bool { return s.lag() == 0 && s.written.Load() >= 10 }, timeout, 20*time.Millisecond,
		"before the kill the KCP follows the stream")
	require.NoError(t, replicas.Kill(leader))
	killed := time.Now()
	t.Logf("killed %s after write %d", leader.Name, s.written.Load())

	step(t, "Then the standby takes over and the KCP catches up with the stream")
	var elected, accepted, caughtUp time.Duration
	require.Eventually(t, func() bool {
		if elected == 0 && replicas.Leader(t.Context()) == standby {
			elected = time.Since(killed)
		}
		if accepted == 0 && acceptedEvents(t.Context(), standby.MetricsAddr) > 0 {
			accepted = time.Since(killed)
		}
		if caughtUp == 0 && elected > 0 && s.lag() == 0 {
			caughtUp = time.Since(killed)
		}
		return elected > 0 && accepted > 0 && caughtUp > 0
	}, 2*timeout, 10*time.Millisecond, "the standby leads, accepts events, and the KCP shows the latest write")
	t.Logf("takeover after SIGKILL: the Service routes to %s after %v, its first event accepted after %v, the KCP caught up after %v",
		standby.Name, elected.Round(10*time.Millisecond), accepted.Round(10*time.Millisecond), caughtUp.Round(10*time.Millisecond))

	followsAgain(t, s, "the KCP follows the stream by push through the new leader")

	step(t, "When the killed replica is back as the standby and the leader is stopped (SIGTERM)")
	require.NoError(t, replicas.Restart(t.Context(), leader))
	leader, standby = standby, leader
	stopped := time.Now()
	exited := make(chan time.Duration, 1)
	go func() {
		assert.NoError(t, leader.Stop())
		exited <- time.Since(stopped)
	}()
	step(t, "Then it hands over at once: it leaves the Service, releases the Lease, and the standby takes over")
	elected, accepted = 0, 0
	require.Eventually(t, func() bool {
		if elected == 0 && replicas.Leader(t.Context()) == standby {
			elected = time.Since(stopped)
		}
		if accepted == 0 && acceptedEvents(t.Context(), standby.MetricsAddr) > 0 {
			accepted = time.Since(stopped)
		}
		return elected > 0 && accepted > 0
	}, 2*timeout, 10*time.Millisecond, "the standby leads and accepts events")
	t.Logf("handover after SIGTERM: the leader exited after %v, the Service routes to %s after %v, its first event accepted after %v",
		(<-exited).Round(10*time.Millisecond), standby.Name, elected.Round(10*time.Millisecond), accepted.Round(10*time.Millisecond))
	followsAgain(t, s, "the KCP follows the stream through the new leader")

	step(t, "And no write is lost: once the stream stops, the KCP holds its last write")
	last := s.stop()
	eventuallyKyma(t, rt, "the last write", func(k *v1beta2.Kyma) bool { return streamValue(k) == last })
	t.Logf("%d writes, the KCP saw %d of them on the way (the others were superseded before it looked)", last, s.distinct())
}

// followsAgain waits until the KCP has shown five more writes, one by one
// as they come, than it had shown so far.
func followsAgain(t *testing.T, s *stream, what string) {
	t.Helper()
	before := s.distinct()
	require.Eventually(t, func() bool { return s.distinct() >= before+5 && s.lag() == 0 }, timeout, 10*time.Millisecond, what)
}

// stream is a runtime admin writing the runtime Kyma at streamEvery, and a
// watcher of the KCP Kyma that tells how far behind it is.
type stream struct {
	written atomic.Int64 // the number of the latest write
	seenNow atomic.Int64 // the write the KCP Kyma showed last
	mu      sync.Mutex
	seen    map[int64]bool
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

func startStream(t *testing.T, rt *harness.Runtime) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &stream{seen: map[int64]bool{}, cancel: cancel}
	s.done.Add(2)
	go func() {
		defer s.done.Done()
		for n := int64(1); ctx.Err() == nil; n++ {
			if err := writeStream(ctx, rt, n); err != nil {
				if ctx.Err() == nil {
					t.Errorf("write %d to the runtime Kyma: %v", n, err)
				}
				return
			}
			s.written.Store(n)
			select {
			case <-ctx.Done():
			case <-time.After(streamEvery):
			}
		}
	}()
	go func() {
		defer s.done.Done()
		for ctx.Err() == nil {
			k := &v1beta2.Kyma{}
			if h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k) == nil {
				n := streamValue(k)
				s.seenNow.Store(n)
				s.mu.Lock()
				s.seen[n] = true
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// lag is how many writes the KCP Kyma is behind.
func (s *stream) lag() int64 { return s.written.Load() - s.seenNow.Load() }

// stop ends the writes and returns the number of the last one.
func (s *stream) stop() int64 {
	s.cancel()
	s.done.Wait()
	return s.written.Load()
}

func (s *stream) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// writeStream writes write n into the runtime Kyma's first module,
// retrying conflicts with the operator's writes.
func writeStream(ctx context.Context, rt *harness.Runtime, n int64) error {
	for {
		k := &v1beta2.Kyma{}
		err := rt.Client.Get(ctx, client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: shared.DefaultRuntimeKymaName}, k)
		if err == nil {
			if len(k.Spec.Modules) == 0 {
				return fmt.Errorf("the runtime Kyma lists no module")
			}
			k.Spec.Modules[0].ControllerName = "stream-" + strconv.FormatInt(n, 10)
			if err = rt.Client.Update(ctx, k); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// streamValue is the number of the write the KCP Kyma shows, 0 for none.
func streamValue(k *v1beta2.Kyma) int64 {
	if len(k.Spec.Modules) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimPrefix(k.Spec.Modules[0].ControllerName, "stream-"), 10, 64)
	return n
}

// acceptedEvents is how many Kyma events a replica's listener answered
// 200; 0 while its metrics do not answer.
func acceptedEvents(ctx context.Context, metricsAddr string) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "listener_requests_total{") && strings.Contains(line, `code="200"`) &&
			strings.Contains(line, `manager="lifecycle-manager"`) {
			fields := strings.Fields(line)
			v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
			total += v
		}
	}
	return total
}
