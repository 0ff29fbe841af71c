package render

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// slot is one of the Renderer's places for a running render. A render
// abandoned at its deadline may hand its slot off to the goroutine still
// running it, which releases it when it really ends: abandoned renders
// cannot pile up beyond the slots.
type slot struct {
	release func()
	handed  bool
}

// acquire waits for a free slot, until ctx ends or for the render
// timeout. Running out of time here is load, not the module's fault: it is
// no LimitError and not remembered.
func (r *Renderer) acquire(ctx context.Context) (*slot, error) {
	wait := time.NewTimer(r.limits.Timeout)
	defer wait.Stop()
	select {
	case r.slots <- struct{}{}:
	case <-wait.C:
		return nil, fmt.Errorf("no free render slot within %s: %d renders are running", r.limits.Timeout, cap(r.slots))
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free render slot: %w", context.Cause(ctx))
	}
	r.metrics.running(1)
	return &slot{release: sync.OnceFunc(func() {
		<-r.slots
		r.metrics.running(-1)
	})}, nil
}

// handOff makes release the job of whoever runs the render now.
func (s *slot) handOff() { s.handed = true }

// done releases the slot unless it was handed off.
func (s *slot) done() {
	if !s.handed {
		s.release()
	}
}
