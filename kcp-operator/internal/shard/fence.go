package shard

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Fence tracks, in this process, which Kymas this shard has claimed and
// how many of its reconciles of each are running, so that a Kyma is let go
// only after they ended and none starts once it is being let go.
type Fence struct {
	mu sync.Mutex
	// open is true for a claimed Kyma, false for one let go.
	open map[types.NamespacedName]bool
	busy map[types.NamespacedName]int
}

// NewFence returns a Fence with no Kyma claimed.
func NewFence() *Fence {
	return &Fence{open: map[types.NamespacedName]bool{}, busy: map[types.NamespacedName]int{}}
}

// Enter starts a reconcile of kyma; false when this shard has not
// claimed it. Each true is followed by one Exit.
func (f *Fence) Enter(kyma types.NamespacedName) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.open[kyma] {
		return false
	}
	f.busy[kyma]++
	return true
}

// Exit ends a reconcile that Enter let in.
func (f *Fence) Exit(kyma types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[kyma]--; f.busy[kyma] <= 0 {
		delete(f.busy, kyma)
	}
}

// Open lets reconciles of a claimed Kyma in.
func (f *Fence) Open(kyma types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open[kyma] = true
}

// Resume opens a Kyma this process has not let go of: one whose owner
// annotation names this shard when the process starts.
func (f *Fence) Resume(kyma types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.open[kyma]; !seen {
		f.open[kyma] = true
	}
}

// Forget drops what the Fence knows of a deleted Kyma.
func (f *Fence) Forget(kyma types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[kyma] == 0 {
		delete(f.open, kyma)
	}
}

// IsOpen is whether kyma is claimed and not being let go.
func (f *Fence) IsOpen(kyma types.NamespacedName) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open[kyma]
}

// Close lets no new reconcile of kyma in and reports whether none runs.
func (f *Fence) Close(kyma types.NamespacedName) (idle bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open[kyma] = false
	return f.busy[kyma] == 0
}
