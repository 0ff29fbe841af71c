package queue_test

import (
	"fmt"
	"testing"

	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/queue"
)

// BenchmarkAdd measures the two costs on the admission path: a change of
// an object not queued yet (a new entry) and one already queued (coalesced).
func BenchmarkAdd(b *testing.B) {
	const distinct = 100000
	keys := make([]event.Key, distinct)
	for i := range keys {
		keys[i] = key(fmt.Sprintf("object-%d", i))
	}
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		q, _ := queue.New(distinct, resync)
		i := 0
		for b.Loop() {
			if i == distinct {
				b.StopTimer()
				q, _ = queue.New(distinct, resync)
				i = 0
				b.StartTimer()
			}
			q.Add(keys[i], "")
			i++
		}
	})
	b.Run("coalesced", func(b *testing.B) {
		b.ReportAllocs()
		q, _ := queue.New(distinct, resync)
		for _, k := range keys {
			q.Add(k, "")
		}
		i := 0
		for b.Loop() {
			if q.Add(keys[i%distinct], "") != queue.Coalesced {
				b.Fatal("not coalesced")
			}
			i++
		}
	})
}
