package report

import (
	"fmt"
	"strings"

	"github.com/lifecycle-manager/e2e/scale/stats"
)

// Target is one goal of issue 11 and whether the run met it.
type Target struct {
	Name  string `json:"name"`
	Goal  string `json:"goal"`
	Value string `json:"value"`
	// Met is nil when the run did not measure it.
	Met  *bool  `json:"met"`
	Note string `json:"note,omitempty"`
}

// The goals for 10,000 Kymas × 5 modules on the 2-core machine.
const (
	MaxRatioToBound     = 2.0
	MaxIdleCorePercent  = 5.0
	MaxPushP99Ms        = 1000.0
	MaxIdlePushP99Ms    = 150.0
	MaxRSSBytes         = 4 << 30
	MinReleaseSpreadUse = 0.5
	// Issue 21: Kymas become Ready steadily, and the KCP serves few more
	// writes than the bare client needs.
	MaxHalfReadyShare   = 0.6
	MaxKCPWritesToBound = 1.3
	MaxRatioToFullBound = 1.5
)

// Judge fills r.Targets from the measured sections.
func (r *Report) Judge() {
	r.Targets = []Target{r.convergenceTarget(), r.idleTarget(), r.pushTarget(), r.idlePushTarget(), r.memoryTarget(),
		r.releaseTarget(), r.linearityTarget(), r.writesTarget(), r.fullBoundTarget()}
}

func judged(name, goal, value string, met bool, note string) Target {
	return Target{Name: name, Goal: goal, Value: value, Met: &met, Note: note}
}

func notMeasured(name, goal string) Target {
	return Target{Name: name, Goal: goal, Value: "not measured"}
}

func (r *Report) convergenceTarget() Target {
	const name, goal = "all Ready", "within 2× the bare-client bound"
	c, b := r.Convergence, r.Bound
	if c == nil || b == nil || b.Seconds == 0 || c.Seconds == 0 {
		return notMeasured(name, goal)
	}
	if c.ProjectedSeconds > 0 {
		value := fmt.Sprintf("not converged: %d Ready after %.0f s; projected %.0f s = %.1f× the bound (%.0f s)",
			c.Ready, c.Seconds, c.ProjectedSeconds, c.RatioToBound, b.Seconds)
		return judged(name, goal, value, false, "")
	}
	value := fmt.Sprintf("%.0f s = %.2f× the bound (%.0f s)", c.Seconds, c.RatioToBound, b.Seconds)
	return judged(name, goal, value, c.RatioToBound <= MaxRatioToBound, "")
}

// fullBoundTarget compares the convergence with the bare client that also
// makes the runtime writes a module install needs.
func (r *Report) fullBoundTarget() Target {
	const name, goal = "all Ready, full bound", "within 1.5× the bare client making the KCP and the runtime writes"
	c, b := r.Convergence, r.FullBound
	if c == nil || b == nil || b.Seconds == 0 || c.Seconds == 0 {
		return notMeasured(name, goal)
	}
	value := fmt.Sprintf("%.0f s = %.2f× the full bound (%.0f s for %d KCP + %d runtime writes)",
		c.Until(), c.RatioToFullBound, b.Seconds, b.Writes, b.RuntimeWrites)
	return judged(name, goal, value, c.ProjectedSeconds == 0 && c.RatioToFullBound <= MaxRatioToFullBound, "")
}

// idleTarget counts the idle window and the periodic resync spread over
// its interval. A window right after a short convergence sees no resync;
// after one longer than the interval it sees its share already, so the
// reconciles in the window are taken out at the wave's cost per reconcile
// before the whole resync is added back.
func (r *Report) idleTarget() Target {
	const name, goal = "idle steady state", "under 5% of one core"
	if r.Idle == nil {
		return notMeasured(name, goal)
	}
	total := r.Idle.CorePercent
	note := "idle window only; the resync wave was not measured"
	if w := r.Resync; w != nil && r.Idle.Seconds > 0 {
		perReconcile := stats.Ratio(w.CPUSeconds, w.Reconciles)
		base := max(0, r.Idle.CPUSeconds-r.Idle.Reconciles*perReconcile)
		basePercent := 100 * base / r.Idle.Seconds
		total = basePercent + w.AmortizedCorePercent
		note = fmt.Sprintf("idle window %.2f%% less its %.0f reconciles = %.2f%%, + resync %.2f%% (one no-op reconcile of every object per %s)",
			r.Idle.CorePercent, r.Idle.Reconciles, basePercent, w.AmortizedCorePercent, r.Config.ResyncInterval)
	}
	return judged(name, goal, fmt.Sprintf("%.2f%% of one core", total), total < MaxIdleCorePercent, note)
}

// idlePushTarget is issue 18's: with the agent's pre-write version the
// reconcile reads the edit as soon as it is stored, not after a recheck.
func (r *Report) idlePushTarget() Target {
	const name, goal = "push latency p99, idle", "under 150 ms, no edit lost"
	if r.Push == nil || r.Push.Idle == nil {
		return notMeasured(name, goal)
	}
	p := r.Push.Idle
	note := ""
	if q := r.Push.IdlePublic; q != nil {
		note = fmt.Sprintf("agents sending the public body (no version): p99 %.0f ms", q.P99)
	}
	return judged(name, goal, fmt.Sprintf("%.0f ms", p.P99), p.P99 < MaxIdlePushP99Ms && r.Push.Lost == 0, note)
}

func (r *Report) pushTarget() Target {
	const name, goal = "push latency p99", "under 1 s"
	if r.Push == nil || (r.Push.Idle == nil && r.Push.UnderLoad == nil) {
		return notMeasured(name, goal)
	}
	worst, where := 0.0, ""
	if p := r.Push.Idle; p != nil && p.P99 >= worst {
		worst, where = p.P99, "idle"
	}
	if p := r.Push.UnderLoad; p != nil && p.P99 >= worst {
		worst, where = p.P99, "during the release"
	}
	note := ""
	if r.Push.Lost > 0 {
		note = fmt.Sprintf("%d edits never arrived", r.Push.Lost)
	}
	return judged(name, goal, fmt.Sprintf("%.0f ms (%s)", worst, where), worst < MaxPushP99Ms && r.Push.Lost == 0, note)
}

func (r *Report) memoryTarget() Target {
	const name, goal = "operator RSS", "under 4 GiB"
	if r.Operator.PeakRSS == 0 {
		return notMeasured(name, goal)
	}
	value := fmt.Sprintf("peak %s, %s per runtime", Bytes(r.Operator.PeakRSS), Bytes(r.Operator.RSSPerRuntime))
	if n := len(r.Operator.Shards); n > 0 {
		value = fmt.Sprintf("largest of %d shards: ", n) + value
	}
	return judged(name, goal, value, r.Operator.PeakRSS < MaxRSSBytes, "")
}

func (r *Report) releaseTarget() Target {
	const name, goal = "release spread", "a new version reaches a channel's Kymas spread over the window, not at once"
	rel := r.Release
	if rel == nil || rel.Seconds == 0 {
		return notMeasured(name, goal)
	}
	window := rel.Window()
	value := fmt.Sprintf("%d Kymas in %.0f s (window %.0f s; updates spanned %.0f s)", rel.Kymas, rel.Seconds, window, rel.FirstToLastUpdate)
	if window == 0 {
		return judged(name, goal, value, false, "the window is 0: everything at once")
	}
	return judged(name, goal, value, rel.FirstToLastUpdate >= MinReleaseSpreadUse*window, "")
}

// Bytes formats n in KiB, MiB or GiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
}

// linearityTarget: a user watching a rollout sees Kymas become Ready
// steadily, not most of them at the end.
func (r *Report) linearityTarget() Target {
	const name, goal = "Ready tracks the work", "half the Kymas Ready by 0.6 of the time until all are"
	c := r.Convergence
	if c == nil || c.HalfReadyShare == 0 {
		return notMeasured(name, goal)
	}
	value := fmt.Sprintf("half Ready after %.0f s of %.0f s = %.2f", c.HalfReadySeconds, c.Until(), c.HalfReadyShare)
	return judged(name, goal, value, c.HalfReadyShare <= MaxHalfReadyShare, "")
}

// writesTarget compares the writes the KCP API server served during the
// convergence (every verb that changes state, whoever sent it) with the
// bare client's.
func (r *Report) writesTarget() Target {
	const name, goal = "KCP writes", "at most 1.3× the bare client's writes"
	c, b := r.Convergence, r.Bound
	if b == nil {
		b = r.FullBound // the same KCP writes, with the runtime ones beside
	}
	if c == nil || c.Served == nil || b == nil || b.Writes == 0 {
		return notMeasured(name, goal)
	}
	writes := KCPWrites(c.Served.KCP)
	ratio := writes / float64(b.Writes)
	value := fmt.Sprintf("%.0f writes = %.2f× the bound's %d", writes, ratio, b.Writes)
	return judged(name, goal, value, ratio <= MaxKCPWritesToBound, "")
}

// KCPWrites sums the served requests ("VERB resource") that write.
func KCPWrites(served map[string]float64) float64 {
	total := 0.0
	for key, n := range served {
		verb, _, _ := strings.Cut(key, " ")
		switch verb {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
			total += n
		}
	}
	return total
}
