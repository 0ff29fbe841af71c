package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/metrics"
)

func TestNewRegistersEverything(t *testing.T) {
	reg := prometheus.NewRegistry()
	depth := 7
	m, err := metrics.New(reg, func() int { return depth })
	require.NoError(t, err)
	m.AdmissionRequests.WithLabelValues("UPDATE", metrics.DecisionQueued).Inc()
	m.EventsFailed.WithLabelValues(metrics.ReasonOverflow).Inc()
	m.CertificateReloads.WithLabelValues("keypair", "success").Inc()

	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Equal(t, 13+6, n, "every metric is exposed, ours and the public agent's")

	const header = "# HELP skr_agent_queue_depth Events not yet delivered: queued, waiting to be retried or in flight.\n" +
		"# TYPE skr_agent_queue_depth gauge\n"
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(header+"skr_agent_queue_depth 7\n"), "skr_agent_queue_depth"))
	depth = 3
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(header+"skr_agent_queue_depth 3\n"), "skr_agent_queue_depth"),
		"the depth is read at every scrape")
}

func TestNewFailsOnDoubleRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := metrics.New(reg, func() int { return 0 })
	require.NoError(t, err)
	_, err = metrics.New(reg, func() int { return 0 })
	require.Error(t, err)
}
