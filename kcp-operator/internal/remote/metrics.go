package remote

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of the runtime client cache.
type Metrics struct {
	clients   prometheus.Gauge
	evictions *prometheus.CounterVec
}

// NewMetrics registers the cache metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		clients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lifecycle_manager_runtime_clients",
			Help: "Runtime clients in the shared cache.",
		}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_runtime_client_evictions_total",
			Help: "Runtime clients dropped from the cache, by reason (connection, tls, authorization, timeout, idle, superseded, kyma-deleted, capacity).",
		}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.clients, m.evictions} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering runtime client metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) size(n int) {
	if m != nil {
		m.clients.Set(float64(n))
	}
}

func (m *Metrics) evicted(reason string, n int) {
	if m != nil {
		m.evictions.WithLabelValues(reason).Inc()
		m.clients.Set(float64(n))
	}
}
