package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the figures and the targets as two short tables.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name, value string) { _, _ = fmt.Fprintf(tw, "%s\t%s\n", name, value) }
	c := r.Config
	row("run", fmt.Sprintf("%d Kymas × %d modules, %d runtime API servers, machine: %d CPUs, %.0f GiB",
		c.Kymas, c.ModulesPerKyma, c.RuntimeServers, r.Machine.CPUs, r.Machine.MemoryGB))
	if len(r.Load) > 0 {
		row("load average (1m)", r.loadLine())
		if len(r.MachineCPU) > 0 {
			row("machine CPU busy/iowait/steal", r.machineCPULine())
		}
	}
	r.boundRows(row)
	r.convergenceRows(row)
	o := r.Operator
	if o.PeakRSS > 0 && len(o.Shards) == 0 {
		row("operator RSS", fmt.Sprintf("peak %s, steady %s, baseline %s, %s per runtime",
			Bytes(o.PeakRSS), Bytes(o.SteadyRSS), Bytes(o.BaselineRSS), Bytes(o.RSSPerRuntime)))
	}
	for _, sh := range o.Shards {
		row("shard "+sh.Name, sh.String())
	}
	if i := r.Idle; i != nil {
		row("idle CPU", fmt.Sprintf("%.2f%% of one core over %.0f s (%.0f reconciles, %.0f KCP requests)", i.CorePercent, i.Seconds, i.Reconciles, i.KCPRequests))
	}
	if rs := r.Resync; rs != nil {
		row("resync wave", fmt.Sprintf("%d objects: %.1f CPU s in %.0f s = %.2f%% of one core over %s",
			rs.Objects, rs.CPUSeconds, rs.Seconds, rs.AmortizedCorePercent, c.ResyncInterval))
	}
	if p := r.Push; p != nil {
		if p.Idle != nil {
			row("push latency, idle", p.Idle.String())
		}
		if p.UnderLoad != nil {
			row("push latency, during the release", p.UnderLoad.String())
		}
		if p.IdlePublic != nil {
			row("push latency, idle, public agent body (no version)", p.IdlePublic.String())
		}
		row("push path counters", p.countersLine())
		for _, series := range []string{"idle", "load"} {
			if s := p.InOperator[series]; s != nil && s.Served != nil {
				row("CPU seconds by program, push "+series, TopServed(s.Served.CPUSeconds, 10))
				row("runtime servers answered, push "+series, TopServed(s.Served.Runtime, 8))
			}
		}
	}
	if rel := r.Release; rel != nil {
		row("release of "+rel.Module, fmt.Sprintf("%d Kymas in %.0f s (at most %g/s: window %.0f s), peak %.1f reconciles/s",
			rel.Kymas, rel.Seconds, rel.Rate, rel.Window(), rel.PeakReconcilesPerS))
	}
	if r.Incomplete != "" {
		row("INCOMPLETE", r.Incomplete)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "target\tgoal\tmeasured\tmet")
	for _, t := range r.Targets {
		met := "n/a"
		if t.Met != nil {
			met = map[bool]string{true: "yes", false: "NO"}[*t.Met]
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Goal, t.Value, met)
	}
	return tw.Flush()
}

// TopServed lists the n largest request counts of a Served map, largest
// first, after their total.
func TopServed(counts map[string]float64, n int) string {
	keys := slices.Collect(maps.Keys(counts))
	total := 0.0
	for _, k := range keys {
		total += counts[k]
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, min(n, len(keys)))
	for _, k := range keys[:min(n, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, counts[k]))
	}
	return fmt.Sprintf("%.0f: %s", total, strings.Join(parts, ", "))
}

// phaseOrder is the order the phases run in.
var phaseOrder = []string{"start", "setup", "model", "bound", "convergence", "idle", "resync", "push", "release"}

func (r *Report) loadLine() string {
	var parts []string
	for _, phase := range phaseOrder {
		if v, ok := r.Load[phase]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f", phase, v))
		}
	}
	return strings.Join(parts, ", ")
}

// machineCPULine shows per phase whether the machine, not the programs,
// was slow: time lost to disk waits or to other guests of the host.
func (r *Report) machineCPULine() string {
	var parts []string
	for _, phase := range phaseOrder {
		if c, ok := r.MachineCPU[phase]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f/%.1f/%.1f%%", phase, 100*c.Busy, 100*c.IOWait, 100*c.Steal))
		}
	}
	return strings.Join(parts, ", ")
}

// countersLine shows where edits could have been held up or lost.
func (p *Push) countersLine() string {
	line := fmt.Sprintf("listener→reconcile mean %.0f ms; listener answers %v", p.ListenerToReconcileMs, p.ListenerAnswers)
	if a := p.Agents; a != nil {
		line += fmt.Sprintf("; agents: %.0f queued, %.0f forwarded, %.0f coalesced, %.0f retried, failed %v, delivery mean %.0f ms",
			a.Queued, a.Forwarded, a.Coalesced, a.Retried, a.Failed, a.DeliveryMeanMs)
		if a.Unreachable > 0 {
			line += fmt.Sprintf(", %d agents unreachable", a.Unreachable)
		}
	}
	for _, series := range []string{"idle", "load"} {
		if r, ok := p.Reads[series]; ok {
			line += fmt.Sprintf("; pushed reads (%s): %.0f fresh, %.0f caught up, %.0f gave up",
				series, r["fresh"], r["caught_up"], r["gave_up"])
		}
		if s := p.InOperator[series]; s != nil {
			if w := s.EditWrite; w != nil {
				line += fmt.Sprintf("; edits stored (%s) p50 %.0f ms, p99 %.0f ms", series, w.P50, w.P99)
			}
			line += fmt.Sprintf("; Kyma controller (%s): pushed waited %.0f ms (%.0f), queue wait %.0f ms, %.1f reconciles/s of %.0f ms, workers %.0f%% busy",
				series, s.ListenerToReconcileMs, s.PushedReconciles, s.KymaQueueWaitMs, s.KymaReconcilesPerSecond, s.KymaReconcileMs, 100*s.KymaWorkersBusy)
			if s.FanOutPace > 0 {
				line += fmt.Sprintf(", fan-out pace at the end %.2f", s.FanOutPace)
			}
			for _, servers := range []string{"KCP", "runtime"} {
				if share, ok := s.SlowWrites[servers]; ok {
					line += fmt.Sprintf(", %s writes over target %.0f%%", servers, 100*share)
				}
			}
			if s.Released > 0 {
				line += fmt.Sprintf(", %d Kymas on the new version after %.0f s", s.Released, s.Seconds)
			}
			if len(s.KCPMeanMs) > 0 {
				line += fmt.Sprintf("; KCP API server mean (%s): %s", series, meansLine(s.KCPMeanMs))
			}
		}
	}
	if p.Lost > 0 {
		line += fmt.Sprintf("; %d edits never arrived", p.Lost)
	}
	return line
}

func (r *Report) boundRows(row func(name, value string)) {
	if b := r.Bound; b != nil {
		row("bare-client bound"+b.verb(), fmt.Sprintf("%.1f s for %d writes (%.0f writes/s, %d workers)", b.Seconds, b.Writes, b.WritesPerSecond, b.Workers))
		b.cpuRow("bare-client bound", row)
	}
	if b := r.FullBound; b != nil {
		row("full bound (with runtime writes)"+b.verb(), fmt.Sprintf("%.1f s for %d KCP + %d runtime writes (%.0f writes/s)",
			b.Seconds, b.Writes, b.RuntimeWrites, b.WritesPerSecond))
		b.cpuRow("full bound", row)
		if rd := b.Reads; rd != nil {
			row("the operator's runtime reads", fmt.Sprintf("%d GETs in %.1f s (per runtime: %s)", rd.Requests, rd.Seconds, perRuntime(rd.PerRuntime)))
			if rd.Served != nil {
				row("their CPU seconds by program", TopServed(rd.Served.CPUSeconds, 10))
			}
		}
	}
}

func perRuntime(reads map[string]int) string {
	parts := make([]string, 0, len(reads))
	for _, r := range slices.Sorted(maps.Keys(reads)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, reads[r]))
	}
	return strings.Join(parts, ", ")
}

func (b *Bound) verb() string {
	if b.Apply {
		return ", server-side apply"
	}
	return ""
}

func (b *Bound) cpuRow(name string, row func(name, value string)) {
	if b.Served != nil {
		row(name+": CPU seconds by program", TopServed(b.Served.CPUSeconds, 10))
	}
}

// convergenceRows prints the convergence's figures, when it was measured.
func (r *Report) convergenceRows(row func(name, value string)) {
	cv, c := r.Convergence, r.Config
	if cv == nil {
		return
	}
	ratio := ""
	switch {
	case cv.RatioToBound == 0: // a run without the bound has no ratio to it
	case cv.ProjectedSeconds > 0:
		ratio = fmt.Sprintf(", ~%.1f× the bound", cv.RatioToBound)
	default:
		ratio = fmt.Sprintf(", %.2f× the bound", cv.RatioToBound)
	}
	if cv.ProjectedSeconds > 0 {
		row("time until all Ready", fmt.Sprintf("not reached: %d of %d Ready after %.0f s; all by ~%.0f s at the second half's rate%s",
			cv.Ready, c.Kymas, cv.Seconds, cv.ProjectedSeconds, ratio))
	} else {
		row("time until all Ready", fmt.Sprintf("%.1f s (%d of %d Ready)%s", cv.Seconds, cv.Ready, c.Kymas, ratio))
	}
	row("reconciles", fmt.Sprintf("%.0f (%.1f/s)", cv.Reconciles, cv.ReconcilesPerSecond))
	row("KCP API requests", fmt.Sprintf("%.0f (%.1f/s, %.2f per reconcile)", cv.KCPRequests, cv.KCPRequestsPerSecond, cv.KCPRequestsPerReconcile))
	row("runtime API requests", fmt.Sprintf("%.0f", cv.RuntimeRequests))
	row("operator CPU until Ready", fmt.Sprintf("%.1f s", cv.CPUSeconds))
	if sv := cv.Served; sv != nil {
		row("KCP server answered", TopServed(sv.KCP, 10))
		row("runtime servers answered", TopServed(sv.Runtime, 10))
		row("CPU seconds by program", TopServed(sv.CPUSeconds, 10))
	}
}

// meansLine lists mean times by request kind, slowest first.
func meansLine(ms map[string]float64) string {
	keys := slices.Collect(maps.Keys(ms))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(ms[b], ms[a]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.0f ms", k, ms[k])
	}
	return strings.Join(parts, ", ")
}
