package fleet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestArrivals(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	made := []madeEdit{
		{kyma: "a", value: "e-0", at: at(0), stored: 7 * time.Millisecond},
		{kyma: "b", value: "e-1", at: at(100), stored: 9 * time.Millisecond},
		{kyma: "a", value: "e-2", at: at(200)}, // overwrites e-0 before the KCP read it
		{kyma: "b", value: "e-3", at: at(300)}, // never shown
	}
	shown := map[string]time.Time{"a/e-2": at(260), "b/e-1": at(130)}
	seen := func(key string) (time.Time, bool) { t, ok := shown[key]; return t, ok }

	got := arrivals(made, seen, start)

	assert.Equal(t, []Edit{
		{At: 0, Latency: 260 * time.Millisecond, Stored: 7 * time.Millisecond},                     // arrived with the later e-2
		{At: 100 * time.Millisecond, Latency: 30 * time.Millisecond, Stored: 9 * time.Millisecond}, // its own value
		{At: 200 * time.Millisecond, Latency: 60 * time.Millisecond},                               // its own value
	}, got, "e-3 is lost: neither it nor a later edit of b was shown")
}

func TestOptionsValidate(t *testing.T) {
	valid := func() Options {
		o := Options{RunDir: "run", OutDir: "out"}
		o.Defaults()
		return o
	}
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"defaults", func(*Options) {}, ""},
		{"too many modules", func(o *Options) { o.Modules = MaxModules + 1 }, "modules 27"},
		{"too many servers", func(o *Options) { o.RuntimeServers = 8 }, "runtime servers 8"},
		{"edits without agents", func(o *Options) { o.PushEdits, o.PushRuntimes = 10, 0 }, "push edits need"},
		{"more agents than runtimes", func(o *Options) { o.PushRuntimes = o.Kymas + 1 }, "push runtimes"},
		{"no folders", func(o *Options) { o.RunDir = "" }, "folders are required"},
		{"bound only without a bound", func(o *Options) { o.BoundOnly, o.BoundWorkers = true, 0 }, "bound only"},
		{"bound only", func(o *Options) { o.BoundOnly, o.BoundWorkers = true, 32 }, ""},
		{"three shards", func(o *Options) { o.Shards, o.BoundWorkers, o.Idle = 3, 32, time.Minute }, ""},
		{"too many shards", func(o *Options) { o.Shards = MaxShards + 1 }, "shards 9"},
		{"shards and a release", func(o *Options) { o.Shards, o.Release = 3, true }, "the release: measured with one operator only"},
		{"shards and agents", func(o *Options) { o.Shards, o.PushRuntimes = 3, 2 }, "push runtimes: measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.change(&o)
			err := o.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDefaultsSizeTheRuntimeServers(t *testing.T) {
	for kymas, want := range map[int]int{20: 2, 1000: 2, 3000: 4, 10000: MaxRuntimeServers} {
		o := Options{Kymas: kymas}
		o.Defaults()
		assert.Equal(t, want, o.RuntimeServers, "%d Kymas", kymas)
	}
}

// TestPhases: with --bound-only the operator only makes the model, and
// no phase that measures it runs; a phase the options turn off is left out.
func TestPhases(t *testing.T) {
	names := func(ru *run) []string {
		var out []string
		for _, p := range ru.steps() {
			out = append(out, p.name)
		}
		return out
	}
	assert.Equal(t, []string{"setup", "model", "bound"}, names(&run{opts: Options{BoundOnly: true}}))
	all := Options{BoundWorkers: 32, Idle: time.Minute, ResyncWave: true, PushEdits: 200, Release: true}
	assert.Equal(t, []string{"setup", "convergence", "bound", "idle", "resync", "push", "release"}, names(&run{opts: all}))
	assert.Equal(t, []string{"setup", "convergence", "idle", "push"}, names(&run{opts: Options{Idle: time.Minute, PushEdits: 200}}),
		"a phase that measures nothing is left out")
}

// TestBoundEndsRun: the bound's copies are left to the servers only when
// no phase after it could meet them.
func TestBoundEndsRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"convergence and bound only", Options{BoundWorkers: 32}, "bound"},
		{"bound only", Options{BoundOnly: true}, "bound"},
		{"an idle window after the bound", Options{BoundWorkers: 32, Idle: time.Minute}, "idle"},
		{"a release after the bound", Options{BoundWorkers: 32, Release: true}, "release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, (&run{opts: tc.opts}).lastPhase())
		})
	}
}
