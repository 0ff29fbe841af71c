package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/metrics"
)

func TestMetricsOnTheGivenRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)

	notAfter := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	m.SetExpiry(metrics.KindAgent, "kcp-system", "k1-webhook-tls", notAfter)
	m.Renewed(metrics.KindAgent, "ca-rotated")
	m.Renewed(metrics.KindAgent, "ca-rotated")
	m.Failed(metrics.OperationSync)
	m.Synced(true)
	m.Synced(false)
	m.SetPhase("CAAdded")
	m.SetPhase("Stable")

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lifecycle_manager_certificate_expiry_timestamp_seconds When a certificate expires (NotAfter), in seconds since the Unix epoch.
# TYPE lifecycle_manager_certificate_expiry_timestamp_seconds gauge
lifecycle_manager_certificate_expiry_timestamp_seconds{kind="agent",name="k1-webhook-tls",namespace="kcp-system"} 1.893456e+09
# HELP lifecycle_manager_certificate_renewals_total Certificates issued, by kind and the reason a new one was needed.
# TYPE lifecycle_manager_certificate_renewals_total counter
lifecycle_manager_certificate_renewals_total{kind="agent",reason="ca-rotated"} 2
# HELP lifecycle_manager_certificate_failures_total Failed certificate operations, by operation.
# TYPE lifecycle_manager_certificate_failures_total counter
lifecycle_manager_certificate_failures_total{operation="sync"} 1
# HELP lifecycle_manager_certificate_runtime_syncs_total Runtime TLS Secret syncs, by whether they wrote (written) or found it current (unchanged).
# TYPE lifecycle_manager_certificate_runtime_syncs_total counter
lifecycle_manager_certificate_runtime_syncs_total{result="unchanged"} 1
lifecycle_manager_certificate_runtime_syncs_total{result="written"} 1
# HELP lifecycle_manager_certificate_rotation_phase 1 for the current phase of the CA rotation, 0 for phases seen before.
# TYPE lifecycle_manager_certificate_rotation_phase gauge
lifecycle_manager_certificate_rotation_phase{phase="CAAdded"} 0
lifecycle_manager_certificate_rotation_phase{phase="Stable"} 1
`), "lifecycle_manager_certificate_expiry_timestamp_seconds", "lifecycle_manager_certificate_renewals_total",
		"lifecycle_manager_certificate_failures_total", "lifecycle_manager_certificate_runtime_syncs_total",
		"lifecycle_manager_certificate_rotation_phase"))

	m.ForgetExpiry(metrics.KindAgent, "kcp-system", "k1-webhook-tls")
	n, err := testutil.GatherAndCount(reg, "lifecycle_manager_certificate_expiry_timestamp_seconds")
	require.NoError(t, err)
	assert.Zero(t, n, "a removed certificate leaves no series")

	_, err = metrics.New(reg)
	assert.ErrorContains(t, err, "registering certificate metrics", "a second set on the same registry is an error, not a panic")
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *metrics.Metrics
	assert.NotPanics(t, func() {
		m.SetExpiry("ca", "ns", "n", time.Now())
		m.ForgetExpiry("ca", "ns", "n")
		m.Renewed("ca", "x")
		m.Failed("x")
		m.SetPhase("Stable")
		m.Synced(true)
		m.ForeignCADropped()
	})
}

func TestEmergencyMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)
	m.SetEmergency(time.Unix(1000, 0), 3)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lifecycle_manager_certificate_emergency_agents_behind Agents whose certificate is not from the new CA yet, during an emergency CA rotation (-1 until counted).
# TYPE lifecycle_manager_certificate_emergency_agents_behind gauge
lifecycle_manager_certificate_emergency_agents_behind 3
# HELP lifecycle_manager_certificate_emergency_deadline_timestamp_seconds When the old CAs leave the bundle at the latest, during an emergency CA rotation; 0 otherwise.
# TYPE lifecycle_manager_certificate_emergency_deadline_timestamp_seconds gauge
lifecycle_manager_certificate_emergency_deadline_timestamp_seconds 1000
# HELP lifecycle_manager_certificate_emergency_rotation 1 while an emergency CA rotation runs: the old CAs leave the bundle once every agent has a certificate of the new one.
# TYPE lifecycle_manager_certificate_emergency_rotation gauge
lifecycle_manager_certificate_emergency_rotation 1
`), "lifecycle_manager_certificate_emergency_agents_behind", "lifecycle_manager_certificate_emergency_deadline_timestamp_seconds",
		"lifecycle_manager_certificate_emergency_rotation"))
	m.EmergencyOver(metrics.OutcomeDeadline)
	assert.InDelta(t, 0, testutil.ToFloat64(gaugeNamed(t, reg, "lifecycle_manager_certificate_emergency_rotation")), 0)
	n, err := testutil.GatherAndCount(reg, "lifecycle_manager_certificate_emergency_rotations_total")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	var none *metrics.Metrics
	none.SetEmergency(time.Now(), 1)
	none.EmergencyOver(metrics.OutcomeAllAgentsMoved)
}

// gaugeNamed collects the one series of name, for testutil.ToFloat64.
func gaugeNamed(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: "copy"}, func() float64 {
				return f.GetMetric()[0].GetGauge().GetValue()
			})
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}
