package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a Paced that remembers the paces it was given.
type recorder struct{ paces []float64 }

func (r *recorder) SetPace(p float64) { r.paces = append(r.paces, p) }

type interval struct{ writes, slow int64 }

// count makes m have counted the interval's writes.
func (iv interval) count(m *Meter) {
	m.writes.Store(iv.writes)
	m.slow.Store(iv.slow)
}

// TestGovernorPace checks the pace over a sequence of intervals: halved
// when most writes were slow, at most every other interval, never below
// MinPace; raised a step otherwise, never above 1.
func TestGovernorPace(t *testing.T) {
	busy, calm, quiet := interval{10, 8}, interval{10, 2}, interval{0, 0}
	tests := []struct {
		name      string
		intervals []interval
		want      float64
	}{
		{"calm: full pace", []interval{calm, calm}, 1},
		{"no writes: full pace", []interval{quiet}, 1},
		{"most writes slow: halved", []interval{busy}, 0.5},
		{"half slow is not most", []interval{{10, 5}}, 1},
		{"a slow lease renewal alone is no signal", []interval{{2, 2}}, 1},
		{"the interval after a cut holds", []interval{busy, busy}, 0.5},
		{"then the next cut", []interval{busy, busy, busy}, 0.25},
		{"never below the floor", repeat(busy, 40), MinPace},
		{"a calm interval raises a step", []interval{busy, calm}, 0.5 + paceStep},
		{"a calm interval ends the hold", []interval{busy, calm, busy}, (0.5 + paceStep) / 2},
		{"back to full within a minute", append([]interval{busy}, repeat(calm, 25)...), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeter("KCP", 100*time.Millisecond)
			r := &recorder{}
			g, err := NewGovernor([]*Meter{m}, prometheus.NewRegistry(), logr.Discard(), r)
			require.NoError(t, err)
			for _, iv := range tt.intervals {
				iv.count(m)
				g.Step()
			}
			assert.InDelta(t, tt.want, g.Pace(), 1e-9)
			if len(r.paces) > 0 {
				assert.InDelta(t, tt.want, r.paces[len(r.paces)-1], 1e-9, "the fan-outs got the pace")
			}
		})
	}
}

// TestGovernorLogsTheChanges checks that an operator reading Info logs sees
// when the fan-outs leave and regain full pace, not every cut in between.
func TestGovernorLogsTheChanges(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	kcp, runtime := NewMeter("KCP", 100*time.Millisecond), NewMeter("runtime", 250*time.Millisecond)
	g, err := NewGovernor([]*Meter{kcp, runtime}, prometheus.NewRegistry(), log)
	require.NoError(t, err)
	busy, calm := interval{10, 8}, interval{10, 2}
	for _, iv := range append(repeat(busy, 20), repeat(calm, 60)...) {
		calm.count(kcp)
		iv.count(runtime)
		g.Step()
	}
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], "runtime writes are slow", "the log names the servers that are slow")
	assert.Contains(t, lines[0], `"target"="250ms"`)
	assert.Contains(t, lines[0], `"pace"=0.5`)
	assert.Contains(t, lines[1], "back at full pace")
}

// TestGovernorHearsEveryMeter checks that the fan-outs slow down while
// the writes to any one kind of server are mostly slow: a release must
// yield to pushed changes whether the KCP or the runtimes are busy.
func TestGovernorHearsEveryMeter(t *testing.T) {
	busy, calm, quiet := interval{10, 8}, interval{10, 2}, interval{0, 0}
	tests := []struct {
		name         string
		kcp, runtime interval
		want         float64
	}{
		{"both calm", calm, calm, 1},
		{"KCP busy", busy, calm, 0.5},
		{"runtimes busy", calm, busy, 0.5},
		{"runtimes busy, no KCP writes", quiet, busy, 0.5},
		{"both busy: one cut, not two", busy, busy, 0.5},
		{"slow writes of both that are not most of either", interval{10, 5}, interval{10, 5}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kcp, runtime := NewMeter("KCP", 100*time.Millisecond), NewMeter("runtime", 250*time.Millisecond)
			g, err := NewGovernor([]*Meter{kcp, runtime}, prometheus.NewRegistry(), logr.Discard())
			require.NoError(t, err)
			tt.kcp.count(kcp)
			tt.runtime.count(runtime)
			g.Step()
			assert.InDelta(t, tt.want, g.Pace(), 1e-9)
		})
	}
}

func repeat(iv interval, n int) []interval {
	out := make([]interval, n)
	for i := range out {
		out[i] = iv
	}
	return out
}

// TestGovernorExportsItsPace checks the gauge and that Start steers until
// its context ends.
func TestGovernorExportsItsPace(t *testing.T) {
	m := NewMeter("runtime", time.Millisecond)
	reg := prometheus.NewRegistry()
	g, err := NewGovernor([]*Meter{m}, reg, logr.Discard())
	require.NoError(t, err)
	g.interval = 10 * time.Millisecond
	assert.InDelta(t, 1, testutil.ToFloat64(g.gauge), 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Start(ctx) }()
	m.writes.Store(5)
	m.slow.Store(5)
	require.Eventually(t, func() bool { return testutil.ToFloat64(g.gauge) == 0.5 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.InDelta(t, 5, testutil.ToFloat64(g.writes.WithLabelValues("runtime", "true")), 0, "the judged writes are counted")
	_, err = NewGovernor([]*Meter{m}, reg, logr.Discard())
	assert.Error(t, err, "a second governor on one registry is an error, not a silent duplicate")
}
