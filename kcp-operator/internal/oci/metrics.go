package oci

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Results of a fetch, the values of the "result" label.
const (
	resultHit   = "hit"
	resultMiss  = "miss"
	resultError = "error"
)

// Metrics of layer fetching. A nil *Metrics records nothing.
type Metrics struct {
	fetches   *prometheus.CounterVec
	bytes     prometheus.Gauge
	evictions prometheus.Counter
}

// NewMetrics registers the layer metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_layer_fetches_total",
			Help: "Blobs and manifests asked for, by result: hit (from the disk cache), miss (downloaded), error.",
		}, []string{"result"}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lifecycle_manager_layer_cache_bytes",
			Help: "Bytes of verified layers and manifests in the disk cache.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lifecycle_manager_layer_cache_evictions_total",
			Help: "Entries removed from the disk cache to stay within its size bound.",
		}),
	}
	for _, c := range []prometheus.Collector{m.fetches, m.bytes, m.evictions} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering layer metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) fetched(result string) {
	if m != nil {
		m.fetches.WithLabelValues(result).Inc()
	}
}

func (m *Metrics) cacheSize(bytes int64) {
	if m != nil {
		m.bytes.Set(float64(bytes))
	}
}

func (m *Metrics) evicted() {
	if m != nil {
		m.evictions.Inc()
	}
}
