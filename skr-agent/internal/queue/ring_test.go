package queue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRingKeepsOrderThroughGrowthAndShrinking compares the ring with a
// plain slice model across growth, wrap-around and shrinking.
func TestRingKeepsOrderThroughGrowthAndShrinking(t *testing.T) {
	var r ring
	var model []*entry
	entries := make([]*entry, 5000)
	for i := range entries {
		entries[i] = &entry{attempts: int32(i)}
	}
	next := 0
	step := func(op int) {
		switch op {
		case 0, 1: // push back twice as often as the others
			r.pushBack(entries[next%len(entries)])
			model = append(model, entries[next%len(entries)])
			next++
		case 2:
			r.pushFront(entries[next%len(entries)])
			model = append([]*entry{entries[next%len(entries)]}, model...)
			next++
		case 3:
			got := r.popFront()
			if len(model) == 0 {
				require.Nil(t, got)
				return
			}
			require.Same(t, model[0], got)
			model = model[1:]
		}
		require.Equal(t, len(model), r.len())
	}
	for i := range 20000 { // grow with a mix
		step(i % 4)
	}
	for len(model) > 0 { // drain, shrinking on the way
		step(3)
	}
	assert.Less(t, len(r.buf), 2048, "the buffer shrinks after a drain")
	step(3)
	for i := range 100 {
		step(i % 4)
	}
}
