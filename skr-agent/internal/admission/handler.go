package admission

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
)

// Pattern is the route of the webhook, for net/http's ServeMux.
const Pattern = "POST /validate/{manager}"

// DefaultMaxBodyBytes bounds a review: it carries the object twice (old and
// new), and etcd stores objects of up to 1.5 MiB.
const DefaultMaxBodyBytes = 8 << 20

// DefaultMaxConcurrent bounds the reviews whose body has begun to arrive:
// far more than the API server sends at once to the agent's few webhooks.
const DefaultMaxConcurrent = 64

// DefaultMaxBodyBytesInFlight bounds the buffers of all review bodies in
// progress together: one review of the largest size, two of the largest
// the API server sends (an object of 1.5 MiB, twice), thousands of typical
// ones. Decoding takes about three times more of the reviews being
// decided; with a full queue that stays within the chart's GOMEMLIMIT.
const DefaultMaxBodyBytesInFlight = 8 << 20

// DefaultWait is how long a review waits for a slot or body budget: short
// against the API server's timeout for the webhook (3 s in the chart), so
// that it gets an answer and counts a failure rather than timing out.
const DefaultWait = 500 * time.Millisecond

// pooledBufferLimit keeps huge bodies out of the buffer pool.
const pooledBufferLimit = 64 << 10

// managerName is what a manager path segment may be: a label value, as the
// managed-by label that names a Watcher's manager.
var managerName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// Enqueuer takes the keys of relevant changes, with the object's
// resourceVersion before the change ("" when unknown); it must not block.
type Enqueuer interface {
	Enqueue(k event.Key, oldVersion string)
	// Resync queues the event that stands for changes the webhook could
	// not look at: the API server lets their writes through.
	Resync()
}

// Options configure a Handler.
type Options struct {
	// MaxBodyBytes bounds a review; DefaultMaxBodyBytes when <= 0.
	MaxBodyBytes int64
	// SendVersions adds the object's resourceVersion before an update to
	// its event; without it, events are exactly the public agent's.
	SendVersions bool
	// MaxConcurrent bounds the reviews in progress whose body has begun to
	// arrive; DefaultMaxConcurrent when <= 0.
	MaxConcurrent int
	// MaxBodyBytesInFlight bounds the buffer capacity that the bodies of all
	// reviews in progress hold together; DefaultMaxBodyBytesInFlight when
	// <= 0, and never below MaxBodyBytes, so that the largest review fits.
	MaxBodyBytesInFlight int64
	// Wait is how long a review waits for its slot and body budget, in
	// all, before it is turned away with 503 and a resync; DefaultWait
	// when <= 0.
	Wait time.Duration
}

// Handler serves the webhook.
type Handler struct {
	queue    Enqueuer
	metrics  *metrics.Metrics
	maxBytes int64
	versions bool
	log      logr.Logger
	// slots and bodyBytes bound the reviews in progress and the memory
	// their bodies hold; wait bounds waiting for them.
	slots     *budget
	bodyBytes *budget
	wait      time.Duration
	// buffers holds *[]byte of at most poolLimit capacity.
	buffers   sync.Pool
	poolLimit int64
	// overloaded is set from a review turned away until one gets through,
	// so that an overload is logged once, not once per review.
	overloaded atomic.Bool
}

// NewHandler returns the webhook handler.
func NewHandler(q Enqueuer, m *metrics.Metrics, o Options, log logr.Logger) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.MaxBodyBytesInFlight <= 0 {
		o.MaxBodyBytesInFlight = DefaultMaxBodyBytesInFlight
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	return &Handler{
		queue: q, metrics: m, maxBytes: o.MaxBodyBytes, versions: o.SendVersions, log: log,
		slots: newBudget(int64(o.MaxConcurrent)), bodyBytes: newBudget(max(o.MaxBodyBytesInFlight, o.MaxBodyBytes)),
		wait:      o.Wait,
		buffers:   sync.Pool{New: func() any { return new([]byte) }},
		poolLimit: min(pooledBufferLimit, o.MaxBodyBytes),
	}
}

// ServeHTTP answers one AdmissionReview. Every readable review is allowed;
// a body without a readable request UID gets 400 (413 when too large), one
// that finds the agent overloaded 503. The API server treats these as a
// webhook failure and, with failurePolicy Ignore, allows the write as well.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h.metrics.AdmissionInFlight.Inc()
	defer h.metrics.AdmissionInFlight.Dec()
	manager := r.PathValue("manager")
	if !managerName.MatchString(manager) {
		h.fail(w, http.StatusBadRequest, fmt.Errorf("invalid manager %q in the path", manager))
		return
	}
	if r.ContentLength > h.maxBytes {
		h.fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("admission review of %d bytes exceeds the limit of %d", r.ContentLength, h.maxBytes))
		return
	}
	// MaxBytesReader also makes the server close the connection of a body
	// that is too large instead of reading the rest.
	b, err := h.readBody(r.Context(), http.MaxBytesReader(w, r.Body, h.maxBytes), r.ContentLength)
	defer b.release()
	if err != nil {
		h.failRead(w, err)
		return
	}
	if h.overloaded.Load() && h.overloaded.CompareAndSwap(true, false) {
		h.log.Info("admission reviews get through again")
	}
	rv, err := decodeReview(b.data)
	if errors.Is(err, errUnreadable) {
		h.fail(w, http.StatusBadRequest, err)
		return
	}
	v := verdict{decision: metrics.DecisionMalformed, why: "malformed review"}
	if err == nil {
		v = decide(manager, rv.Request)
	}
	if v.decision == metrics.DecisionQueued {
		if !h.versions {
			v.oldVersion = ""
		}
		h.queue.Enqueue(v.key, v.oldVersion)
	}
	// Counted before answering, so that the count is complete once the API server has its answer.
	h.metrics.AdmissionRequests.WithLabelValues(operationLabel(rv.Request.Operation), v.decision).Inc()
	h.metrics.AdmissionDuration.Observe(time.Since(start).Seconds())
	h.answer(w, rv)
	if v.decision == metrics.DecisionMalformed {
		h.log.Info("allowed a malformed admission review", "uid", rv.Request.UID, "reason", v.why, "error", err)
		return
	}
	if log := h.log.V(1); log.Enabled() {
		log.Info("admission review", "uid", rv.Request.UID, "manager", manager,
			"operation", rv.Request.Operation, "decision", v.decision, "key", v.key.String(), "oldResourceVersion", v.oldVersion, "reason", v.why)
	}
}

// failRead answers a review whose body could not be read.
func (h *Handler) failRead(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errOverloaded):
		h.turnAway(w, err)
	case errors.As(err, &tooLarge):
		h.fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("admission review exceeds the limit of %d bytes", h.maxBytes))
	default:
		h.fail(w, http.StatusBadRequest, fmt.Errorf("reading admission review: %w", err))
	}
}

// turnAway answers 503 to a review the agent has no room for. Its write
// goes through (failurePolicy Ignore) without the agent knowing what
// changed, so the resync of the runtime's Kyma stands for it, as for a
// change that found the queue full. No Retry-After: a retry within the
// same call would only add load while the agent is overloaded.
func (h *Handler) turnAway(w http.ResponseWriter, err error) {
	h.queue.Resync()
	h.metrics.AdmissionRequests.WithLabelValues(operationLabel(""), metrics.DecisionOverloaded).Inc()
	if h.overloaded.CompareAndSwap(false, true) {
		h.log.Error(err, "turning admission reviews away until one gets through again; a resync of the runtime's Kyma covers their changes")
	}
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}

func (h *Handler) answer(w http.ResponseWriter, rv *review) {
	body, err := encodeAllowed(rv)
	if err != nil { // only strings and a bool: cannot happen, but never answer an empty 200
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(body); err != nil {
		h.log.V(1).Info("writing admission response", "error", err.Error())
	}
}

func (h *Handler) fail(w http.ResponseWriter, status int, err error) {
	h.metrics.AdmissionRequests.WithLabelValues(operationLabel(""), metrics.DecisionInvalid).Inc()
	h.log.Info("rejected an unreadable admission review", "status", status, "error", err.Error())
	http.Error(w, err.Error(), status)
}

// operationLabel keeps the metric's label values to the known operations.
func operationLabel(op string) string {
	switch op {
	case opCreate, opUpdate, opDelete, opConnect:
		return op
	default:
		return "unknown"
	}
}
