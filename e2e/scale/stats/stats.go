package stats

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// values: the smallest value with at least p% of values at or below it.
// It is 0 for no values.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Median is the middle value of values, or the mean of the two middle
// ones for an even count; 0 for no values.
func Median(values []float64) float64 {
	n := len(values)
	if n == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Latency summarises durations.
type Latency struct {
	Count int `json:"count"`
	// P50, P99 and Max in milliseconds.
	P50 float64 `json:"p50Ms"`
	P99 float64 `json:"p99Ms"`
	Max float64 `json:"maxMs"`
}

// Summarize returns the count, p50, p99 and maximum of ds.
func Summarize(ds []time.Duration) Latency {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	return Latency{Count: len(ds), P50: Percentile(ms, 50), P99: Percentile(ms, 99), Max: Percentile(ms, 100)}
}

// Point is a value at a time.
type Point struct {
	T time.Time
	V float64
}

// Rates turns samples of a counter into per-second rates between
// consecutive samples, each placed at the later sample. A counter that went
// down (a restart) starts over from its new value.
func Rates(samples []Point) []Point {
	out := make([]Point, 0, len(samples))
	for i := 1; i < len(samples); i++ {
		dt := samples[i].T.Sub(samples[i-1].T).Seconds()
		if dt <= 0 {
			continue
		}
		dv := samples[i].V - samples[i-1].V
		if dv < 0 {
			dv = samples[i].V
		}
		out = append(out, Point{T: samples[i].T, V: dv / dt})
	}
	return out
}

// Ratio is a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// String prints "p50 12 ms, p99 80 ms, max 95 ms (200 edits)".
func (l *Latency) String() string {
	return fmt.Sprintf("p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d edits)", l.P50, l.P99, l.Max, l.Count)
}

// Project returns when a count sampled as points (X seconds, Y count) would
// reach total at the rate of the samples' second half, which leaves out a
// slow start. It is 0 when the count reached total already or did not grow
// in the second half (no honest projection then).
func Project(xs, ys []float64, total float64) float64 {
	n := min(len(xs), len(ys))
	if n < 2 || ys[n-1] >= total {
		return 0
	}
	mid := (n - 1) / 2
	dx, dy := xs[n-1]-xs[mid], ys[n-1]-ys[mid]
	if dx <= 0 || dy <= 0 {
		return 0
	}
	return xs[n-1] + (total-ys[n-1])*dx/dy
}

// Reached returns when a count sampled as points (X seconds, Y count) first
// reached target, interpolated between the two samples around it; 0 when it
// never did.
func Reached(xs, ys []float64, target float64) float64 {
	n := min(len(xs), len(ys))
	for i := range n {
		if ys[i] < target {
			continue
		}
		if i == 0 || ys[i] == ys[i-1] {
			return xs[i]
		}
		return xs[i-1] + (target-ys[i-1])*(xs[i]-xs[i-1])/(ys[i]-ys[i-1])
	}
	return 0
}
