package shard

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAssignIsStableAndSpreads(t *testing.T) {
	shards := []string{"a", "b", "c"}
	counts := map[string]int{}
	for i := range 3000 {
		id := fmt.Sprintf("runtime-%d", i)
		got := Assign(id, shards)
		assert.Equal(t, got, Assign(id, []string{"c", "a", "b"}), "the order of the list must not matter")
		counts[got]++
	}
	for _, s := range shards {
		assert.InDelta(t, 1000, counts[s], 120, "shard %s got %d of 3000", s, counts[s])
	}
}

func TestRemovingAShardMovesOnlyItsRuntimes(t *testing.T) {
	before, after := []string{"a", "b", "c"}, []string{"a", "b"}
	moved := 0
	for i := range 3000 {
		id := fmt.Sprintf("runtime-%d", i)
		from, to := Assign(id, before), Assign(id, after)
		if from != "c" {
			assert.Equal(t, from, to, "runtime %s was on a shard that stays", id)
		} else {
			moved++
		}
	}
	assert.Positive(t, moved)
}

func TestAddingAShardMovesRuntimesOnlyToIt(t *testing.T) {
	before, after := []string{"a", "b"}, []string{"a", "b", "d"}
	moved := 0
	for i := range 3000 {
		id := fmt.Sprintf("runtime-%d", i)
		if from, to := Assign(id, before), Assign(id, after); from != to {
			assert.Equal(t, "d", to)
			moved++
		}
	}
	assert.InDelta(t, 1000, moved, 120)
}

func TestAssignWithoutShards(t *testing.T) {
	assert.Empty(t, Assign("x", nil))
	assert.Equal(t, "only", Assign("x", []string{"only"}))
}
