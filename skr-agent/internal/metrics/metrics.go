package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Admission decisions: what the webhook did with a review. It allows every
// request whatever the decision.
const (
	// DecisionQueued: a relevant change, queued to be forwarded.
	DecisionQueued = "queued"
	// DecisionUnchanged: an UPDATE that did not change the watched part.
	DecisionUnchanged = "unchanged"
	// DecisionIgnored: a CONNECT or an unsupported subresource.
	DecisionIgnored = "ignored"
	// DecisionMalformed: a review with a readable UID but unusable content.
	DecisionMalformed = "malformed"
	// DecisionInvalid: no readable review (answered 400 or 413).
	DecisionInvalid = "invalid"
	// DecisionOverloaded: turned away unread (answered 503) because no slot
	// or body budget was free in time; a resync of the runtime's Kyma
	// stands for the change, which the API server lets through.
	DecisionOverloaded = "overloaded"
)

// Reasons for failed events.
const (
	// ReasonTransport: no answer from the KCP (retried).
	ReasonTransport = "transport"
	// ReasonServerError: a 5xx answer (retried).
	ReasonServerError = "server_error"
	// ReasonThrottled: a 429 answer (retried after Retry-After).
	ReasonThrottled = "throttled"
	// ReasonUnauthorized: a 401, the KCP refused the agent's certificate
	// (denied, expired); retried, since the operator replaces it.
	ReasonUnauthorized = "unauthorized"
	// ReasonRejected: any other non-2xx answer (not retried).
	ReasonRejected = "rejected"
	// ReasonOverflow: a change dropped because the queue was full; a resync stands for it.
	ReasonOverflow = "overflow"
	// ReasonShutdown: an event still queued when the drain time at shutdown ran out.
	ReasonShutdown = "shutdown"
)

// Metrics are the agent's metrics.
type Metrics struct {
	// AdmissionRequests counts reviews by operation and decision.
	AdmissionRequests *prometheus.CounterVec
	// AdmissionDuration is the time from reading a review to answering it.
	AdmissionDuration *DurationHistogram
	// AdmissionInFlight is the number of reviews in progress, including
	// those whose body has not arrived yet.
	AdmissionInFlight prometheus.Gauge
	// AdmissionBodyBytes is the buffer capacity that the bodies of reviews
	// in progress hold.
	AdmissionBodyBytes prometheus.Gauge
	// EventsForwarded counts events the KCP accepted.
	EventsForwarded prometheus.Counter
	// EventsCoalesced counts changes merged into an event already queued.
	EventsCoalesced prometheus.Counter
	// EventsRetried counts failed deliveries that will be tried again.
	EventsRetried prometheus.Counter
	// EventsFailed counts failures by reason.
	EventsFailed *prometheus.CounterVec
	// Resyncs counts the resync events the KCP accepted after an overflow.
	Resyncs prometheus.Counter
	// DeliveryDuration is the time from the oldest change of an event to its acceptance by the KCP.
	DeliveryDuration prometheus.Histogram
	// LastDelivery is the Unix time of the last event the KCP accepted.
	LastDelivery prometheus.Gauge
	// CertificateReloads counts reloads of TLS material by what (keypair, ca) and result (success, failure).
	CertificateReloads *prometheus.CounterVec
}

// New creates the metrics and registers them on reg, with the queue depth
// read from depth at every scrape.
func New(reg prometheus.Registerer, depth func() int) (*Metrics, error) {
	m := &Metrics{
		AdmissionRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skr_agent_admission_requests_total",
			Help: "Admission reviews answered, by operation and decision: queued, unchanged, ignored, malformed (allowed); " +
				"invalid (400 or 413); overloaded (503, covered by a resync).",
		}, []string{"operation", "decision"}),
		AdmissionDuration: newDurationHistogram(prometheus.HistogramOpts{
			Name:    "skr_agent_admission_duration_seconds",
			Help:    "Time from reading an admission review to answering it.",
			Buckets: []float64{.0001, .00025, .0005, .001, .002, .005, .01, .05},
		}),
		AdmissionInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skr_agent_admission_in_flight",
			Help: "Admission reviews in progress, from their headers to the answer, including those whose body has not arrived.",
		}),
		AdmissionBodyBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skr_agent_admission_body_bytes",
			Help: "Bytes of buffer that the bodies of admission reviews in progress hold (at most --max-review-bytes-in-flight).",
		}),
		EventsForwarded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skr_agent_events_forwarded_total",
			Help: "Events accepted by the KCP.",
		}),
		EventsCoalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skr_agent_events_coalesced_total",
			Help: "Changes merged into an event that was already queued.",
		}),
		EventsRetried: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skr_agent_events_retried_total",
			Help: "Failed deliveries that are tried again.",
		}),
		EventsFailed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skr_agent_events_failed_total",
			Help: "Failed deliveries and dropped changes, by reason: transport, server_error, throttled (retried); " +
				"rejected (not retried); overflow (covered by a resync); shutdown (left at exit).",
		}, []string{"reason"}),
		Resyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skr_agent_resyncs_total",
			Help: "Resync events for the runtime's Kyma accepted by the KCP after the queue overflowed.",
		}),
		DeliveryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "skr_agent_delivery_duration_seconds",
			Help:    "Time from the oldest change an event covers to its acceptance by the KCP.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900},
		}),
		LastDelivery: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skr_agent_last_delivery_timestamp_seconds",
			Help: "Unix time of the last event accepted by the KCP.",
		}),
		CertificateReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skr_agent_certificate_reloads_total",
			Help: "Reloads of the TLS files, by what (keypair, ca) and result (success, failure).",
		}, []string{"what", "result"}),
	}
	queueDepth := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skr_agent_queue_depth",
		Help: "Events not yet delivered: queued, waiting to be retried or in flight.",
	}, func() float64 { return float64(depth()) })
	for _, c := range []prometheus.Collector{
		m.AdmissionRequests, m.AdmissionDuration, m.AdmissionInFlight, m.AdmissionBodyBytes, m.EventsForwarded, m.EventsCoalesced, m.EventsRetried,
		m.EventsFailed, m.Resyncs, m.DeliveryDuration, m.LastDelivery, m.CertificateReloads, queueDepth,
		m.AdmissionDuration.last, newPublicNames(m), newFIPSMode(),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	return m, nil
}
