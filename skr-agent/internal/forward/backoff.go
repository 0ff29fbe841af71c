package forward

import (
	"math/rand/v2"
	"time"
)

// maxRetryAfter caps the wait a KCP may ask for, so that a wrong header
// cannot silence the agent for a day.
const maxRetryAfter = 10 * time.Minute

// Backoff computes pauses after consecutive failures.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// Pause is the pause after the n-th consecutive failure (n >= 1): Initial
// doubled n-1 times, at most Max, with "equal jitter" (between half and all
// of it) so that the agents of many runtimes do not return to a recovering
// KCP in lockstep. A Retry-After wins, up to maxRetryAfter.
func (b Backoff) Pause(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxRetryAfter)
	}
	d := b.Max
	if shift := n - 1; shift < 32 {
		d = min(b.Initial<<shift, b.Max)
	}
	half := d / 2
	return half + rand.N(d-half+1) //nolint:gosec // jitter needs no cryptographic randomness
}
