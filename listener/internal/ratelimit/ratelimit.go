package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

const (
	// minSweep is the map size below which no sweep runs: a thousand
	// buckets are a few hundred KiB, not worth a walk over the map.
	minSweep = 1024
	// reportInterval spaces the refusals of one key that are reported, so
	// that a flooder is named in the log without flooding the log.
	reportInterval = time.Minute
	// maxWait keeps the wait of an absurdly slow rate from overflowing a
	// Duration; callers cap it much lower anyway.
	maxWait = time.Hour
)

// Verdict is the answer of Take.
type Verdict struct {
	// Allowed means that the event may pass; it took a token.
	Allowed bool
	// Wait is, for a refused event, how long until the bucket holds a
	// token again.
	Wait time.Duration
	// Report marks the first refusal of a key in reportInterval.
	Report bool
}

// Limiter keeps one token bucket per key. A nil *Limiter allows everything.
type Limiter struct {
	rate  rate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	// sweepAt is the map size at which the next insert sweeps first;
	// doubling it after each sweep keeps the cost per insert constant.
	sweepAt int
}

type bucket struct {
	tokens   *rate.Limiter
	reported time.Time
}

// New returns a limiter that allows perSecond events per key on average
// and burst at once, reading the time from now. A negative perSecond
// disables the limit: New returns nil.
func New(perSecond float64, burst int, now func() time.Time) *Limiter {
	if perSecond < 0 {
		return nil
	}
	return &Limiter{
		rate: rate.Limit(perSecond), burst: burst, now: now,
		buckets: make(map[string]*bucket), sweepAt: minSweep,
	}
}

// Take takes a token from key's bucket if it holds one.
func (l *Limiter) Take(key string) Verdict {
	if l == nil {
		return Verdict{Allowed: true}
	}
	// One lock for the map and the bucket: a sweep must not drop a bucket
	// between its lookup and the take, or the take would be forgotten.
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.sweepAt {
			l.sweep(now)
		}
		b = &bucket{tokens: rate.NewLimiter(l.rate, l.burst)}
		l.buckets[key] = b
	}
	if b.tokens.AllowN(now, 1) {
		return Verdict{Allowed: true}
	}
	v := Verdict{Wait: l.waitFor(b.tokens.TokensAt(now))}
	if b.reported.IsZero() || now.Sub(b.reported) >= reportInterval {
		b.reported = now
		v.Report = true
	}
	return v
}

// waitFor is the time until a bucket holding tokens holds one.
func (l *Limiter) waitFor(tokens float64) time.Duration {
	if l.rate <= 0 {
		return maxWait
	}
	seconds := (1 - tokens) / float64(l.rate)
	if seconds >= maxWait.Seconds() {
		return maxWait
	}
	return time.Duration(seconds * float64(time.Second))
}

// sweep drops the buckets that are full again: a full bucket answers
// exactly like a new one, so dropping it changes no answer. The survivors
// move to a new map, because a Go map never gives back the room of
// deleted entries.
func (l *Limiter) sweep(now time.Time) {
	full := float64(l.burst)
	kept := make(map[string]*bucket, len(l.buckets)/2)
	for key, b := range l.buckets {
		if b.tokens.TokensAt(now) < full {
			kept[key] = b
		}
	}
	l.buckets = kept
	l.sweepAt = max(minSweep, 2*len(kept))
}

// Len returns the number of buckets held.
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
