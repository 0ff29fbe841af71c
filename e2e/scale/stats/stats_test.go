package stats_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lifecycle-manager/e2e/scale/stats"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		want   float64
	}{
		{"empty", nil, 0},
		{"odd count, unsorted", []float64{1.58, 1.32, 1.40}, 1.40},
		{"even count is the mean of the middle two", []float64{1.53, 1.32, 1.58, 1.40}, 1.465},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, stats.Median(tc.values), 1e-9)
		})
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // unsorted on purpose
	}
	for _, tc := range []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"one value", []float64{7}, 99, 7},
		{"median of 1..100", hundred, 50, 50},
		{"p99 of 1..100", hundred, 99, 99},
		{"max of 1..100", hundred, 100, 100},
		{"p99 of 200 values is the second largest", seq(200), 99, 198},
		{"small p is the minimum", []float64{3, 1, 2}, 0.1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, stats.Percentile(tc.values, tc.p), 1e-9)
		})
	}
	values := []float64{3, 1, 2}
	stats.Percentile(values, 50)
	assert.Equal(t, []float64{3, 1, 2}, values, "the input keeps its order")
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

func TestSummarize(t *testing.T) {
	ds := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 2 * time.Second}
	got := stats.Summarize(ds)
	assert.Equal(t, stats.Latency{Count: 4, P50: 20, P99: 2000, Max: 2000}, got)
}

func TestRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	samples := []stats.Point{
		{T: t0, V: 10},
		{T: t0.Add(2 * time.Second), V: 30},
		{T: t0.Add(2 * time.Second), V: 40}, // same instant: skipped
		{T: t0.Add(4 * time.Second), V: 4},  // counter restarted
	}
	got := stats.Rates(samples)
	assert.Equal(t, []stats.Point{{T: t0.Add(2 * time.Second), V: 10}, {T: t0.Add(4 * time.Second), V: 2}}, got)
	assert.Empty(t, stats.Rates(samples[:1]))
}

func TestProject(t *testing.T) {
	tests := []struct {
		name   string
		xs, ys []float64
		total  float64
		want   float64
	}{
		{"steady rate", []float64{0, 10, 20, 30, 40}, []float64{0, 10, 20, 30, 40}, 100, 100},
		{"slow start is left out", []float64{0, 10, 20, 30, 40}, []float64{0, 0, 10, 30, 50}, 100, 65},
		{"already there", []float64{0, 10}, []float64{0, 100}, 100, 0},
		{"stalled second half", []float64{0, 10, 20, 30}, []float64{0, 50, 50, 50}, 100, 0},
		{"too few samples", []float64{5}, []float64{1}, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stats.Project(tt.xs, tt.ys, tt.total); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("Project = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReached(t *testing.T) {
	xs := []float64{0, 10, 20, 30}
	tests := []struct {
		name   string
		ys     []float64
		target float64
		want   float64
	}{
		{"between two samples", []float64{0, 100, 300, 1000}, 500, 20 + 10*200.0/700},
		{"on a sample", []float64{0, 100, 500, 1000}, 500, 20},
		{"at the first sample", []float64{600, 700, 800, 1000}, 500, 0},
		{"never", []float64{0, 100, 200, 300}, 500, 0},
		{"a crawl, then a jump", []float64{0, 10, 20, 1000}, 500, 20 + 10*480.0/980},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, stats.Reached(xs, tt.ys, tt.target), 1e-9)
		})
	}
}
