package fleet

import (
	"github.com/lifecycle-manager/e2e/scale/report"
)

// shardsConverged records each shard's convergence: base and end are the
// readings at its start and end, c the census at its end.
func (ru *run) shardsConverged(base, end reading, c Census) {
	if len(ru.f.Operators) < 2 {
		return
	}
	shards := make([]report.Shard, len(ru.f.Operators))
	for i, op := range ru.f.Operators {
		sh := report.Shard{Name: op.Shard, Kymas: c.ByShard[op.Shard]}
		if i < len(base.shards) && i < len(end.shards) {
			sh.BaselineRSS = base.shards[i].RSS
			sh.ConvergenceCPUSeconds = end.shards[i].CPUSeconds - base.shards[i].CPUSeconds
			sh.PeakRSS = end.shards[i].PeakRSS
		}
		if i < len(ru.ready.shardPeakRSS) {
			sh.PeakRSS = max(sh.PeakRSS, ru.ready.shardPeakRSS[i])
		}
		shards[i] = sh
	}
	ru.r.Operator.Shards = shards
	ru.largestShard()
}

// shardsIdle records each shard's memory at the end of the idle window.
func (ru *run) shardsIdle(end reading) {
	shards := ru.r.Operator.Shards
	for i := range shards {
		if i >= len(end.shards) {
			break
		}
		sh := &shards[i]
		sh.SteadyRSS = end.shards[i].RSS
		sh.PeakRSS = max(sh.PeakRSS, end.shards[i].PeakRSS)
		if sh.Kymas > 0 {
			sh.RSSPerRuntime = (sh.SteadyRSS - sh.BaselineRSS) / int64(sh.Kymas)
		}
	}
	ru.largestShard()
}

// largestShard makes the operator's figures those of the shard with the
// highest peak: what one pod of the sharded fleet must hold.
func (ru *run) largestShard() {
	o := &ru.r.Operator
	if len(o.Shards) == 0 {
		return
	}
	top := o.Shards[0]
	for _, sh := range o.Shards[1:] {
		if sh.PeakRSS > top.PeakRSS {
			top = sh
		}
	}
	o.BaselineRSS, o.SteadyRSS, o.PeakRSS, o.RSSPerRuntime = top.BaselineRSS, top.SteadyRSS, top.PeakRSS, top.RSSPerRuntime
}
