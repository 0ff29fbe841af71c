package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of an emergency rotation, the "outcome" label.
const (
	// OutcomeAllAgentsMoved: every agent had a certificate of the new CA.
	OutcomeAllAgentsMoved = "all-agents-moved"
	// OutcomeDeadline: the deadline passed with agents still behind.
	OutcomeDeadline = "deadline"
)

// emergency are the metrics of an emergency CA rotation, which tell an
// operator how far it is.
type emergency struct {
	emergencyActive   prometheus.Gauge
	emergencyBehind   prometheus.Gauge
	emergencyDeadline prometheus.Gauge
	emergencyDone     *prometheus.CounterVec
}

func newEmergency() emergency {
	return emergency{
		emergencyActive: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lifecycle_manager_certificate_emergency_rotation",
			Help: "1 while an emergency CA rotation runs: the old CAs leave the bundle once every agent has a certificate of the new one.",
		}),
		emergencyBehind: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lifecycle_manager_certificate_emergency_agents_behind",
			Help: "Agents whose certificate is not from the new CA yet, during an emergency CA rotation (-1 until counted).",
		}),
		emergencyDeadline: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lifecycle_manager_certificate_emergency_deadline_timestamp_seconds",
			Help: "When the old CAs leave the bundle at the latest, during an emergency CA rotation; 0 otherwise.",
		}),
		emergencyDone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecycle_manager_certificate_emergency_rotations_total",
			Help: "Emergency CA rotations that dropped the old CAs, by outcome: all-agents-moved or deadline.",
		}, []string{"outcome"}),
	}
}

// SetEmergency records an emergency rotation in progress with its deadline
// and the agents still behind (negative: not counted yet).
func (m *Metrics) SetEmergency(deadline time.Time, behind int) {
	if m == nil {
		return
	}
	m.emergencyActive.Set(1)
	m.emergencyDeadline.Set(float64(deadline.Unix()))
	m.emergencyBehind.Set(float64(behind))
}

// EmergencyOver records that no emergency rotation runs; outcome, when not
// empty, counts one that just dropped the old CAs.
func (m *Metrics) EmergencyOver(outcome string) {
	if m == nil {
		return
	}
	m.emergencyActive.Set(0)
	m.emergencyDeadline.Set(0)
	m.emergencyBehind.Set(0)
	if outcome != "" {
		m.emergencyDone.WithLabelValues(outcome).Inc()
	}
}
