package admission

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
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

// pooledBufferLimit keeps huge bodies out of the buffer pool.
const pooledBufferLimit = 64 << 10

// managerName is what a manager path segment may be: a label value, as the
// managed-by label that names a Watcher's manager.
var managerName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// Enqueuer takes the keys of relevant changes, with the object's
// resourceVersion before the change ("" when unknown); it must not block.
type Enqueuer interface {
	Enqueue(k event.Key, oldVersion string)
}

// Options configure a Handler.
type Options struct {
	// MaxBodyBytes bounds a review; DefaultMaxBodyBytes when <= 0.
	MaxBodyBytes int64
	// SendVersions adds the object's resourceVersion before an update to
	// its event; without it, events are exactly the public agent's.
	SendVersions bool
}

// Handler serves the webhook.
type Handler struct {
	queue    Enqueuer
	metrics  *metrics.Metrics
	maxBytes int64
	versions bool
	log      logr.Logger
	buffers  sync.Pool
}

// NewHandler returns the webhook handler.
func NewHandler(q Enqueuer, m *metrics.Metrics, o Options, log logr.Logger) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &Handler{
		queue: q, metrics: m, maxBytes: o.MaxBodyBytes, versions: o.SendVersions, log: log,
		buffers: sync.Pool{New: func() any { return new(bytes.Buffer) }},
	}
}

// ServeHTTP answers one AdmissionReview. Every readable review is allowed;
// a body without a readable request UID gets 400 (413 when too large), which
// the API server treats as a webhook failure and, with failurePolicy Ignore,
// allows the write as well.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	manager := r.PathValue("manager")
	if !managerName.MatchString(manager) {
		h.fail(w, http.StatusBadRequest, fmt.Errorf("invalid manager %q in the path", manager))
		return
	}
	buf := h.buffers.Get().(*bytes.Buffer) // the pool only holds buffers
	defer h.putBuffer(buf)
	if status, err := h.readBody(w, r, buf); err != nil {
		h.fail(w, status, err)
		return
	}
	rv, err := decodeReview(buf.Bytes())
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

func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) (int, error) {
	if r.ContentLength > h.maxBytes {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("admission review of %d bytes exceeds the limit of %d", r.ContentLength, h.maxBytes)
	}
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.maxBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, fmt.Errorf("admission review exceeds the limit of %d bytes", h.maxBytes)
	case err != nil:
		return http.StatusBadRequest, fmt.Errorf("reading admission review: %w", err)
	}
	return http.StatusOK, nil
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

func (h *Handler) putBuffer(buf *bytes.Buffer) {
	if buf.Cap() > pooledBufferLimit {
		return
	}
	buf.Reset()
	h.buffers.Put(buf)
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
