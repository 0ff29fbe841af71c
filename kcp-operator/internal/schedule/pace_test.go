package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

func kymaKeys(prefix string, n int) []types.NamespacedName {
	keys := make([]types.NamespacedName, n)
	for i := range keys {
		keys[i] = types.NamespacedName{Namespace: "kcp-system", Name: fmt.Sprintf("%s-%d", prefix, i)}
	}
	return keys
}

func seconds(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

// fakeClock is a settable time for the pacer, named as the fake it is.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestPacer(p Pace) (*Pacer, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	pacer := NewPacer(p)
	pacer.now = c.now
	return pacer, c
}

// TestPacerWindow checks where one fan-out's Kymas land: one after another
// at the rate.
func TestPacerWindow(t *testing.T) {
	tests := []struct {
		name string
		pace Pace
		n    int
		want []time.Duration
	}{
		{"no pace: all at once", Pace{}, 3, seconds(0, 0, 0)},
		{"rate alone", Pace{Rate: 4}, 3, seconds(0, 0.25, 0.5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestPacer(tt.pace)
			assert.Equal(t, tt.want, p.Delays(kymaKeys("kyma", tt.n)))
		})
	}
}

// TestPacerRateHoldsAcrossChanges checks that a second change right after
// the first queues behind it instead of doubling the rate: a template and
// its release meta change together in every release.
func TestPacerRateHoldsAcrossChanges(t *testing.T) {
	p, clock := newTestPacer(Pace{Rate: 2})
	assert.Equal(t, seconds(0, 0.5, 1), p.Delays(kymaKeys("a", 3)))
	clock.advance(200 * time.Millisecond)
	assert.Equal(t, seconds(1.3, 1.8), p.Delays(kymaKeys("b", 2)))
}

// TestPacerKeepsAKymasTime checks that a Kyma asked for again before its
// time keeps that time and takes no second slot (the old and new state of
// a changed object, or a template and its release meta, name the same
// Kymas), and that once its time is past it gets a new one.
func TestPacerKeepsAKymasTime(t *testing.T) {
	p, clock := newTestPacer(Pace{Rate: 1})
	keys := kymaKeys("kyma", 3)
	assert.Equal(t, seconds(0, 1, 2), p.Delays(keys))
	clock.advance(1500 * time.Millisecond)
	assert.Equal(t, seconds(1.5, 0.5), p.Delays([]types.NamespacedName{keys[0], keys[2]}),
		"kyma-0's time is past, so it takes the next free slot; kyma-2 keeps its own")
	assert.Equal(t, seconds(2.5), p.Delays(kymaKeys("later", 1)), "the slot kyma-2 kept was not taken again")
}

// TestPacerNil checks that a controller without a pacer enqueues at once.
func TestPacerNil(t *testing.T) {
	var p *Pacer
	assert.Equal(t, seconds(0, 0), p.Delays(kymaKeys("kyma", 2)))
}

// TestPacerBacklog checks the metric that tells how far a release still
// reaches: the last Kyma's time from now, 0 once it is due.
func TestPacerBacklog(t *testing.T) {
	p, clock := newTestPacer(Pace{Rate: 1})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, RegisterBacklog(reg, "kyma", p))
	assert.Zero(t, p.Backlog())
	p.Delays(kymaKeys("kyma", 3))
	clock.advance(500 * time.Millisecond)
	assert.Equal(t, 1500*time.Millisecond, p.Backlog())
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lifecycle_manager_fan_out_backlog_seconds How long until the last Kyma that a ModuleTemplate, ModuleReleaseMeta or Watcher change re-enqueues is due (--fan-out-rate, at the current lifecycle_manager_fan_out_pace).
# TYPE lifecycle_manager_fan_out_backlog_seconds gauge
lifecycle_manager_fan_out_backlog_seconds{controller="kyma"} 1.5
`)))
	clock.advance(2 * time.Second)
	assert.Zero(t, p.Backlog())
	assert.Error(t, RegisterBacklog(reg, "kyma", p), "a second registration of one controller's backlog is an error, not a silent duplicate")
}
