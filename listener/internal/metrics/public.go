package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lifecycle-manager/api/publicmetrics"
)

// PublicServerName is the only value of the server_name label of the
// public runtime-watcher listener's metrics.
const PublicServerName = "listener"

// DurationVec is the request duration histogram that also keeps the public
// listener's watcher_listener_request_duration, the duration of the last
// request, so that no observation can reach one without the other.
type DurationVec struct {
	*prometheus.HistogramVec
	last prometheus.Gauge
}

// WithLabelValues returns the observer of the histogram's series for lvs;
// its observations also set the last request's duration.
func (d *DurationVec) WithLabelValues(lvs ...string) prometheus.Observer {
	o := d.HistogramVec.WithLabelValues(lvs...)
	return prometheus.ObserverFunc(func(seconds float64) {
		o.Observe(seconds)
		d.last.Set(seconds)
	})
}

func newDurationVec(opts prometheus.HistogramOpts, labels []string) *DurationVec {
	return &DurationVec{
		HistogramVec: prometheus.NewHistogramVec(opts, labels),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "watcher_listener_request_duration", Help: "Indicates the latency of each request in seconds (of the last one)",
			ConstLabels: prometheus.Labels{"server_name": PublicServerName},
		}),
	}
}

// publicNames are the listener's metrics under the names and labels of the
// public runtime-watcher listener, which ran in the public lifecycle
// manager, for the dashboards and alerts written for it. They are computed
// at every scrape from the listener's own series, so that the two cannot
// disagree.
type publicNames struct {
	m                                                *Metrics
	requests, failed, inFlight, tooLarge, unverified *prometheus.Desc
}

func newPublicNames(m *Metrics) *publicNames {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append([]string{"server_name"}, labels...), nil)
	}
	return &publicNames{
		m:          m,
		requests:   desc("watcher_listener_requests_total", "Indicates the number of requests"),
		failed:     desc("watcher_listener_request_errors_total", "Indicates the number of failed requests (answered other than 200)"),
		inFlight:   desc("watcher_listener_inflight_requests", "Indicates the number of inflight requests"),
		tooLarge:   desc("watcher_listener_exceeding_size_limit_requests_total", "Indicates the number of requests exceeding size limit"),
		unverified: desc("watcher_listener_failed_verification_requests_total", "Indicates the number of requests that failed verification", "request_uri_label"),
	}
}

func (p *publicNames) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.requests, p.failed, p.inFlight, p.tooLarge, p.unverified} {
		ch <- d
	}
}

func (p *publicNames) Collect(ch chan<- prometheus.Metric) {
	var requests, failed, tooLarge, inFlight, unverified float64
	publicmetrics.EachSeries(p.m.Requests, func(labels map[string]string, n float64) {
		requests += n
		if labels["code"] != "200" {
			failed += n
		}
		if labels["code"] == "413" {
			tooLarge += n
		}
	})
	publicmetrics.EachSeries(p.m.InFlight, func(_ map[string]string, n float64) { inFlight += n })
	publicmetrics.EachSeries(p.m.VerificationFailures, func(_ map[string]string, n float64) { unverified += n })
	ch <- prometheus.MustNewConstMetric(p.requests, prometheus.CounterValue, requests, PublicServerName)
	ch <- prometheus.MustNewConstMetric(p.failed, prometheus.CounterValue, failed, PublicServerName)
	ch <- prometheus.MustNewConstMetric(p.tooLarge, prometheus.CounterValue, tooLarge, PublicServerName)
	ch <- prometheus.MustNewConstMetric(p.inFlight, prometheus.GaugeValue, inFlight, PublicServerName)
	// Failures are not recorded by request URI (a failed TLS handshake has none).
	ch <- prometheus.MustNewConstMetric(p.unverified, prometheus.CounterValue, unverified, PublicServerName, "")
}
