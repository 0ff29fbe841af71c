package setup_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// delayedWrites holds the operator's KCP writes for a settable time, as a
// busy KCP API server would: a fake of the server's latency, since a real
// server cannot be made slow on request.
type delayedWrites struct{ delay atomic.Int64 }

func (d *delayedWrites) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			time.Sleep(time.Duration(d.delay.Load())) // the server's latency under test, not a wait for a result
		}
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestSlowKCPWritesSlowTheFanOuts checks the wiring of the Governor of
// internal/schedule: the operator's own KCP client is timed, and once most
// of its writes take longer than Options.FanOutLatencyTarget the fan-outs'
// pace falls.
func TestSlowKCPWritesSlowTheFanOuts(t *testing.T) {
	pace := func() float64 {
		return gathered(t, "lifecycle_manager_fan_out_pace")[0].GetGauge().GetValue()
	}
	kcpWriteDelay.delay.Store(int64(150 * time.Millisecond)) // the default target is 100 ms
	defer kcpWriteDelay.delay.Store(0)
	c := op.Manager.GetClient() // the client the controllers write with
	require.Eventually(t, func() bool {
		for range 4 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "headroom-", Namespace: ns}}
			require.NoError(t, c.Create(t.Context(), cm))
			require.NoError(t, c.Delete(t.Context(), cm))
		}
		return pace() < 1
	}, timeout, tick, "the fan-outs slow down while the KCP's writes are slow")
}

// TestRuntimeWritesAreTimed checks the other half of the wiring: the
// operator's writes to the runtimes (here: the agent it installed) reach
// the governor too, judged against options.RuntimeWriteLatencyTarget.
func TestRuntimeWritesAreTimed(t *testing.T) {
	waitForAgent(t) // its install is a runtime write, whichever test runs first
	timed := func() float64 {
		var n float64
		for _, m := range gathered(t, "lifecycle_manager_fan_out_timed_writes_total") {
			for _, l := range m.GetLabel() {
				if l.GetName() == "servers" && l.GetValue() == "runtime" {
					n += m.GetCounter().GetValue()
				}
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return timed() > 0 }, timeout, tick, "the runtime writes are timed")
}

// gathered returns the series of the operator's metric name; it fails
// the test if there are none.
func gathered(t *testing.T, name string) []*dto.Metric {
	t.Helper()
	mfs, err := metrics.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()
		}
	}
	t.Fatalf("%s is not exported", name)
	return nil
}
