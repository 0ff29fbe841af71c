package listener

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/lifecycle-manager/listener/event"
	"github.com/lifecycle-manager/listener/internal/identity"
	"github.com/lifecycle-manager/listener/internal/metrics"
	"github.com/lifecycle-manager/listener/internal/queue"
)

// EventPath is the route of events; contract and manager are path segments.
const EventPath = "/{contract}/{manager}/event"

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok") })
	r.Get("/readyz", s.ready)
	r.Post(EventPath, s.handleEvent)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/healthz" || req.URL.Path == "/readyz" {
			r.ServeHTTP(w, req)
			return
		}
		s.instrument(r, w, req)
	})
}

func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	if s.draining.Load() {
		writeText(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	writeText(w, http.StatusOK, "ok")
}

// instrument counts and times every request but the health checks.
func (s *Server) instrument(next http.Handler, w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.metrics.InFlight.Inc()
	sw := statusWriter{ResponseWriter: w, code: http.StatusOK}
	defer func() {
		s.metrics.InFlight.Dec()
		manager := s.managerLabel(r.URL.Path)
		s.metrics.Requests.WithLabelValues(manager, codeLabel(sw.code)).Inc()
		s.metrics.Duration.WithLabelValues(manager).Observe(time.Since(start).Seconds())
	}()
	next.ServeHTTP(&sw, r)
}

// managerLabel is the manager of an event path when it is registered:
// paths are chosen by callers, label values must not be.
func (s *Server) managerLabel(path string) string {
	_, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	manager, _, _ := strings.Cut(rest, "/")
	if _, ok := s.queues[manager]; ok {
		return manager
	}
	return metrics.UnknownManager
}

func (s *Server) handleEvent(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		s.unavailable(w, "the listener is shutting down")
		return
	}
	contract, manager := chi.URLParam(r, "contract"), chi.URLParam(r, "manager")
	q, ok := s.queues[manager]
	if !ok || !event.IsContract(contract) {
		writeText(w, http.StatusNotFound, "unknown contract or manager")
		return
	}
	runtimeID, ok := s.authorize(w, r)
	if !ok || !s.admit(w, manager, runtimeID) {
		return
	}
	payload, ok := s.readPayload(w, r)
	if !ok {
		return
	}
	ev := event.Event{
		RuntimeID: runtimeID, Manager: manager, Contract: contract,
		Object: payload.Object, GVK: payload.GVK, Received: s.cfg.Now(),
		OldResourceVersion: payload.OldResourceVersion,
	}
	// 200, not 202: the public runtime-watcher agent counts any other
	// answer as a failed request, and the event is taken either way.
	switch q.Offer(&ev) {
	case queue.Added:
		w.WriteHeader(http.StatusOK)
	case queue.Coalesced:
		s.metrics.Coalesced.WithLabelValues(manager).Inc()
		w.WriteHeader(http.StatusOK)
	case queue.Full:
		s.metrics.Throttled.WithLabelValues(manager, metrics.ThrottledQueueFull).Inc()
		w.Header().Set("Retry-After", s.retryAfter)
		writeText(w, http.StatusTooManyRequests, "the event queue is full")
	case queue.NoConsumer:
		s.unavailable(w, "no consumer for this manager on this replica")
	}
}

// authorize establishes the caller's runtime ID and asks the embedder's
// AcceptRuntime about it; on failure it has answered.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	runtimeID, err := s.identify.Identify(r)
	if err != nil {
		reason := identity.Reason(err)
		s.countFailure(reason)
		s.log.V(1).Info("caller not identified", "reason", reason, "remote", r.RemoteAddr, "error", err.Error())
		writeText(w, http.StatusUnauthorized, "client certificate not accepted: "+reason)
		return "", false
	}
	if s.cfg.AcceptRuntime == nil {
		return runtimeID, true
	}
	err = s.cfg.AcceptRuntime(r.Context(), runtimeID)
	var rejected *RejectedError
	switch {
	case err == nil:
		return runtimeID, true
	case errors.As(err, &rejected):
		s.countFailure(rejected.Reason)
		s.log.V(1).Info("runtime rejected", "runtimeID", runtimeID, "reason", rejected.Reason, "error", err.Error())
		writeText(w, http.StatusForbidden, "runtime not accepted: "+rejected.Reason)
	default:
		s.log.Error(err, "cannot decide whether to accept the runtime", "runtimeID", runtimeID)
		s.unavailable(w, "cannot check the runtime now")
	}
	return "", false
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readPayload reads and decodes the body within MaxBodyBytes; on failure
// it has answered, with a message that never quotes the body.
func (s *Server) readPayload(w http.ResponseWriter, r *http.Request) (event.Payload, bool) {
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		writeText(w, http.StatusRequestEntityTooLarge, "the body is larger than "+strconv.FormatInt(limit, 10)+" bytes")
		return event.Payload{}, false
	}
	buf, _ := bodyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodyBuffers.Put(buf)
	// MaxBytesReader also stops bodies without Content-Length.
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		w.Header().Set("Connection", "close") // the rest of the body is not worth reading
		writeText(w, http.StatusRequestEntityTooLarge, "the body is larger than "+strconv.FormatInt(limit, 10)+" bytes")
		return event.Payload{}, false
	case err != nil:
		writeText(w, http.StatusBadRequest, "reading the body failed")
		return event.Payload{}, false
	}
	payload, err := event.Decode(buf.Bytes())
	if err != nil {
		// Decode's errors name fields, never content.
		writeText(w, http.StatusBadRequest, err.Error())
		return event.Payload{}, false
	}
	return payload, true
}

// unavailable answers 503 and asks the client to come back, on a new
// connection: this replica is going away or cannot take the event.
func (s *Server) unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", s.retryAfter)
	w.Header().Set("Connection", "close")
	writeText(w, http.StatusServiceUnavailable, msg)
}

func writeText(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// codeLabel avoids formatting the frequent codes on every request.
func codeLabel(code int) string {
	switch code {
	case http.StatusOK:
		return "200"
	case http.StatusBadRequest:
		return "400"
	case http.StatusUnauthorized:
		return "401"
	case http.StatusForbidden:
		return "403"
	case http.StatusNotFound:
		return "404"
	case http.StatusTooManyRequests:
		return "429"
	case http.StatusServiceUnavailable:
		return "503"
	default:
		return strconv.Itoa(code)
	}
}
