package listener

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/lifecycle-manager/listener/internal/metrics"
)

// maxRateRetryAfter caps the Retry-After of a runtime over its rate: with
// a very slow configured rate the exact wait could be hours, and the agent
// pauses all of its events for as long as asked.
const maxRateRetryAfter = 60 * time.Second

// admit takes one of the runtime's tokens, or answers 429. It runs before
// the body is read, so that a flooding runtime costs a cached certificate
// check and a short answer, not a decode; the connection stays open,
// because a new TLS handshake would cost more than the answer.
func (s *Server) admit(w http.ResponseWriter, manager, runtimeID string) bool {
	v := s.limiter.Take(runtimeID)
	if v.Allowed {
		return true
	}
	s.metrics.Throttled.WithLabelValues(manager, metrics.ThrottledRuntimeRate).Inc()
	if v.Report {
		s.log.Info("runtime over its event rate; answering 429", "runtimeID", runtimeID,
			"eventsPerSecond", s.cfg.RuntimeEventRate, "burst", s.cfg.RuntimeEventBurst)
	}
	w.Header().Set("Retry-After", retryAfterSeconds(v.Wait))
	writeText(w, http.StatusTooManyRequests, "this runtime is over its event rate limit")
	return false
}

// retryAfterSeconds rounds a wait up to whole seconds, the unit of
// Retry-After: rounding down would bring the agent back too early.
func retryAfterSeconds(wait time.Duration) string {
	seconds := math.Ceil(min(wait, maxRateRetryAfter).Seconds())
	return strconv.Itoa(max(1, int(seconds)))
}
