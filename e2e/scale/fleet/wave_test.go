package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStillAfter: the wave is over once the reconcile counter stood still
// for stillSamples samples after reaching one reconcile per object; a
// counter that stands still short of that, or moves again, does not count.
func TestStillAfter(t *testing.T) {
	const floor = 100
	for _, tc := range []struct {
		name    string
		samples []float64
		want    []int
	}{
		{"settles after the floor", []float64{60, 100, 100, 100, 100}, []int{0, 0, 1, 2, 3}},
		{"still below the floor is not done", []float64{60, 60, 60, 60}, []int{0, 0, 0, 0}},
		{"moving again starts anew", []float64{100, 100, 120, 120}, []int{0, 1, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last, still := 50.0, 0
			got := make([]int, 0, len(tc.samples))
			for _, now := range tc.samples {
				still = stillAfter(still, last, now, floor)
				last = now
				got = append(got, still)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
