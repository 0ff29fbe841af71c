package shard

import (
	"crypto/sha256"
	"encoding/binary"
)

// Assign picks the shard of a runtime: the one with the highest hash of
// (shard, runtime ID). Removing a shard moves only its runtimes, adding one
// moves to it only runtimes that now rank it first. Empty when shards is.
func Assign(runtimeID string, shards []string) string {
	var best string
	var bestScore uint64
	for _, s := range shards {
		score := weight(s, runtimeID)
		if best == "" || score > bestScore || score == bestScore && s < best {
			best, bestScore = s, score
		}
	}
	return best
}

func weight(shard, runtimeID string) uint64 {
	h := sha256.New()
	h.Write([]byte(shard))
	h.Write([]byte{0})
	h.Write([]byte(runtimeID))
	return binary.BigEndian.Uint64(h.Sum(nil))
}
