package server

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is the agent's readiness: ready while it serves the webhook, not
// ready from the start of shutdown, so that the API server stops calling
// this replica before it closes. Liveness only says the process answers:
// an unreachable KCP is no reason to restart the agent.
type Health struct {
	ready atomic.Bool
}

// SetReady sets the readiness.
func (h *Health) SetReady(ready bool) { h.ready.Store(ready) }

// Ready reports the readiness.
func (h *Health) Ready() bool { return h.ready.Load() }

// OpsHandler serves /metrics from g, /healthz and /readyz.
func OpsHandler(g prometheus.Gatherer, h *Health) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !h.Ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}
