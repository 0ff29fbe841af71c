package metrics

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Kinds of certificates, the "kind" label.
const (
	KindCA       = "ca"
	KindAgent    = "agent"
	KindEndpoint = "endpoint"
)

// Operations that can fail, the "operation" label.
const (
	OperationIssue  = "issue"
	OperationRotate = "rotate"
	OperationSync   = "sync"
	OperationRemove = "remove"
)

// Metrics records the PKI's state. Its methods are safe for concurrent use.
type Metrics struct {
	expiry   *prometheus.GaugeVec
	renewals *prometheus.CounterVec
	phase    *prometheus.GaugeVec
	failures *prometheus.CounterVec
	syncs    *prometheus.CounterVec
	foreign  prometheus.Counter
	emergency

	mu        sync.Mutex
	lastPhase string
}

// New creates the metrics and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		expiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_certificate_expiry_timestamp_seconds",
			Help: "When a certificate expires (NotAfter), in seconds since the Unix epoch.",
		}, []string{"kind", "namespace", "name"}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_certificate_renewals_total",
			Help: "Certificates issued, by kind and the reason a new one was needed.",
		}, []string{"kind", "reason"}),
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lifecycle_manager_certificate_rotation_phase",
			Help: "1 for the current phase of the CA rotation, 0 for phases seen before.",
		}, []string{"phase"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_certificate_failures_total",
			Help: "Failed certificate operations, by operation.",
		}, []string{"operation"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_certificate_runtime_syncs_total",
			Help: "Runtime TLS Secret syncs, by whether they wrote (written) or found it current (unchanged).",
		}, []string{"result"}),
		foreign: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lifecycle_manager_certificate_foreign_cas_dropped_total",
			Help: "CAs that someone else wrote into the trust bundle, dropped from it (name one in --cert-trusted-ca-fingerprints to keep it).",
		}),
	}
	m.emergency = newEmergency()
	for _, c := range []prometheus.Collector{m.expiry, m.renewals, m.phase, m.failures, m.syncs, m.foreign,
		m.emergencyActive, m.emergencyBehind, m.emergencyDeadline, m.emergencyDone} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering certificate metrics: %w", err)
		}
	}
	return m, nil
}

// SetExpiry records when the certificate of kind in namespace/name expires.
func (m *Metrics) SetExpiry(kind, namespace, name string, notAfter time.Time) {
	if m == nil {
		return
	}
	m.expiry.WithLabelValues(kind, namespace, name).Set(float64(notAfter.Unix()))
}

// ForgetExpiry drops the series of a certificate that no longer exists.
func (m *Metrics) ForgetExpiry(kind, namespace, name string) {
	if m == nil {
		return
	}
	m.expiry.DeleteLabelValues(kind, namespace, name)
}

// Renewed counts a new certificate of kind, issued for reason.
func (m *Metrics) Renewed(kind, reason string) {
	if m == nil {
		return
	}
	m.renewals.WithLabelValues(kind, reason).Inc()
}

// Failed counts a failed operation.
func (m *Metrics) Failed(operation string) {
	if m == nil {
		return
	}
	m.failures.WithLabelValues(operation).Inc()
}

// SetPhase marks phase as the current rotation phase.
func (m *Metrics) SetPhase(phase string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastPhase != "" && m.lastPhase != phase {
		m.phase.WithLabelValues(m.lastPhase).Set(0)
	}
	m.phase.WithLabelValues(phase).Set(1)
	m.lastPhase = phase
}

// ForeignCADropped counts a CA someone else wrote into the trust bundle,
// dropped from it.
func (m *Metrics) ForeignCADropped() {
	if m == nil {
		return
	}
	m.foreign.Inc()
}

// Synced counts a runtime Secret sync.
func (m *Metrics) Synced(wrote bool) {
	if m == nil {
		return
	}
	result := "unchanged"
	if wrote {
		result = "written"
	}
	m.syncs.WithLabelValues(result).Inc()
}
