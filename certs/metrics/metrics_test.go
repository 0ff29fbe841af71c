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
`)))

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
	})
}
