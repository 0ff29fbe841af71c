package setup

import (
	"net/http"
	"net/http/pprof"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

// metricsOptions serve the metrics and, with the Profiling gate, pprof
// beside them: one endpoint to reach and protect, not two.
func metricsOptions(opts options.Options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if !opts.Gates.Enabled(options.Profiling) {
		return m
	}
	m.ExtraHandlers = map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
	return m
}
