package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "listener"

// UnknownManager labels requests for a path that names no registered
// manager, so that callers cannot create label values at will.
const UnknownManager = "unknown"

// Reasons of Throttled.
const (
	// ThrottledRuntimeRate: the runtime sent beyond its event rate.
	ThrottledRuntimeRate = "runtime_rate"
	// ThrottledQueueFull: the manager's queue held its capacity.
	ThrottledQueueFull = "queue_full"
)

// Metrics are the listener's metrics.
type Metrics struct {
	// Requests counts answered event requests by manager and status code.
	Requests *prometheus.CounterVec
	// Duration observes the time to answer an event request, by manager.
	Duration *DurationVec
	// InFlight is the number of event requests being answered.
	InFlight prometheus.Gauge
	// Delivered counts events handed to consumers, by manager.
	Delivered *prometheus.CounterVec
	// Coalesced counts events merged into a waiting event, by manager.
	Coalesced *prometheus.CounterVec
	// Throttled counts events answered 429, by manager and reason
	// (ThrottledRuntimeRate, ThrottledQueueFull).
	Throttled *prometheus.CounterVec
	// VerificationFailures counts callers turned away, by reason: the
	// identity reasons of package identity, and the reasons of the
	// embedder's runtime check.
	VerificationFailures *prometheus.CounterVec
	// TLSReloads counts reloads of certificate files by material ("keypair",
	// "ca") and result ("success", "failure").
	TLSReloads *prometheus.CounterVec

	reg prometheus.Registerer
}

// New creates the metrics and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "requests_total",
			Help: "Event requests answered, by manager and HTTP status code.",
		}, []string{"manager", "code"}),
		Duration: newDurationVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "request_duration_seconds",
			Help:    "Time to answer an event request, by manager.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"manager"}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "requests_in_flight",
			Help: "Event requests being answered.",
		}),
		Delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "events_delivered_total",
			Help: "Events handed to the manager's consumer.",
		}, []string{"manager"}),
		Coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "events_coalesced_total",
			Help: "Events merged into an event for the same object that was still waiting.",
		}, []string{"manager"}),
		Throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "throttled_total",
			Help: "Events answered 429, by manager and reason: runtime_rate (the runtime is over its event rate), queue_full.",
		}, []string{"manager", "reason"}),
		VerificationFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "verification_failures_total",
			Help: "Callers turned away (TLS handshakes, 401 and 403 answers), by reason.",
		}, []string{"reason"}),
		TLSReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "tls_reloads_total",
			Help: "Reloads of certificate files, by material and result.",
		}, []string{"material", "result"}),
		reg: reg,
	}
	for _, c := range []prometheus.Collector{
		m.Requests, m.Duration, m.InFlight, m.Delivered, m.Coalesced, m.Throttled, m.VerificationFailures, m.TLSReloads,
		m.Duration.last, newPublicNames(m),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering listener metrics: %w", err)
		}
	}
	return m, nil
}

// AddManager registers the queue depth gauge of a manager, read from
// depth at every scrape, and starts its event and throttling counters at
// zero, so that a rate over them is defined before the first event, the
// first coalesced one and the first 429 (a dashboard panel shows 0, not
// nothing).
func (m *Metrics) AddManager(manager string, depth func() int) error {
	for _, reason := range []string{ThrottledRuntimeRate, ThrottledQueueFull} {
		m.Throttled.WithLabelValues(manager, reason)
	}
	m.Delivered.WithLabelValues(manager)
	m.Coalesced.WithLabelValues(manager)
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "queue_depth",
		Help:        "Events waiting for the manager's consumer.",
		ConstLabels: prometheus.Labels{"manager": manager},
	}, func() float64 { return float64(depth()) })
	if err := m.reg.Register(g); err != nil {
		return fmt.Errorf("registering the queue depth of manager %s: %w", manager, err)
	}
	return nil
}
