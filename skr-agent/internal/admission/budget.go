package admission

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errWaitedTooLong ends a wait for a budget that did not become free in time.
var errWaitedTooLong = errors.New("waited too long")

// budget is a counting semaphore: review slots, or bytes of body buffers.
// A waiter that fits is let in at once, even past larger ones that wait
// longer: one large review that does not fit yet must not hold up the many
// small ones. A large one may then wait in vain, but only for a bounded
// time, and the change it carried is covered by a resync.
type budget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []*waiter
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when n is granted
}

func newBudget(size int64) *budget { return &budget{size: size} }

// acquire takes n, waiting at most wait (none when it is not positive) and
// while ctx lasts.
func (b *budget) acquire(ctx context.Context, n int64, wait time.Duration) error {
	if n > b.size {
		return errors.New("more than the whole budget")
	}
	b.mu.Lock()
	// Every waiter is let in as soon as it fits, so those still waiting do
	// not fit now: taking n when it fits passes no one who could go first.
	if b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	var cause error
	select {
	case <-w.ready:
		return nil
	case <-t.C:
		cause = errWaitedTooLong
	case <-ctx.Done():
		cause = ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted while the timer fired: keep it
		return nil
	default:
	}
	for i, o := range b.waiters {
		if o == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	return cause
}

// release gives back n and lets in the waiters that fit now.
func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.grant()
}

// grant lets in, oldest first, every waiter that fits; the caller holds mu.
func (b *budget) grant() {
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if b.used+w.n <= b.size {
			b.used += w.n
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiters[len(kept):])
	b.waiters = kept
}

// inUse is what is taken now.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
