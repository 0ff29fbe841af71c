package metrics

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is the metric families of one scrape by name.
type Snapshot map[string]*dto.MetricFamily

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return families, nil
}

// Merge returns one snapshot holding the series of all: the counters of
// several processes (shards) then add up in Sum, By and HistogramSum.
func Merge(snaps ...Snapshot) Snapshot {
	out := Snapshot{}
	for _, s := range snaps {
		for name, f := range s {
			m, ok := out[name]
			if !ok {
				m = &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type}
				out[name] = m
			}
			m.Metric = append(m.Metric, f.GetMetric()...)
		}
	}
	return out
}

// Scrape fetches and parses url.
func Scrape(ctx context.Context, c *http.Client, url string) (Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return Parse(resp.Body)
}

// Labels selects series: every given label must have the given value.
type Labels map[string]string

func (l Labels) match(m *dto.Metric) bool {
	for name, want := range l {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == name {
				found = lp.GetValue() == want
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Sum adds the values of the series of family name that match sel: the
// value of counters, gauges and untyped series, the count of histograms
// and summaries. A missing family sums to 0.
func (s Snapshot) Sum(name string, sel Labels) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	total := 0.0
	for _, m := range f.GetMetric() {
		if !sel.match(m) {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Untyped != nil:
			total += m.GetUntyped().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		case m.Summary != nil:
			total += float64(m.GetSummary().GetSampleCount())
		}
	}
	return total
}

// HistogramSum adds the sums of the matching series of histogram name.
func (s Snapshot) HistogramSum(name string, sel Labels) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	total := 0.0
	for _, m := range f.GetMetric() {
		if sel.match(m) && m.Histogram != nil {
			total += m.GetHistogram().GetSampleSum()
		}
	}
	return total
}

// By sums the matching series of family name per value of label.
func (s Snapshot) By(name, label string, sel Labels) map[string]float64 {
	out := map[string]float64{}
	f, ok := s[name]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		if !sel.match(m) {
			continue
		}
		key := ""
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				key = lp.GetValue()
			}
		}
		one := Snapshot{name: &dto.MetricFamily{Name: f.Name, Type: f.Type, Metric: []*dto.Metric{m}}}
		out[key] += one.Sum(name, nil)
	}
	return out
}

// ServedRequests counts the requests a kube-apiserver served, from its
// apiserver_request_total, per "VERB resource" ("APPLY kymas/status"):
// which objects a client writes and reads, which its own metrics, split
// only by HTTP method, cannot tell.
func (s Snapshot) ServedRequests() map[string]float64 {
	out := map[string]float64{}
	for key, m := range s.served("apiserver_request_total") {
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// Durations are the count and the summed seconds of requests.
type Durations struct{ Count, Seconds float64 }

// ServedDurations sums a kube-apiserver's apiserver_request_duration_seconds
// per "VERB resource", as ServedRequests counts them: the difference of
// two scrapes is how long the server took for what it answered between.
func (s Snapshot) ServedDurations() map[string]Durations {
	out := map[string]Durations{}
	for key, m := range s.served("apiserver_request_duration_seconds") {
		d := out[key]
		d.Count += float64(m.GetHistogram().GetSampleCount())
		d.Seconds += m.GetHistogram().GetSampleSum()
		out[key] = d
	}
	return out
}

// served yields the series of a kube-apiserver family name with their
// "VERB resource" key, leaving out those of no resource (discovery,
// health and metrics paths).
func (s Snapshot) served(name string) iter.Seq2[string, *dto.Metric] {
	return func(yield func(string, *dto.Metric) bool) {
		f, ok := s[name]
		if !ok {
			return
		}
		for _, m := range f.GetMetric() {
			var verb, resource, sub string
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "verb":
					verb = lp.GetValue()
				case "resource":
					resource = lp.GetValue()
				case "subresource":
					sub = lp.GetValue()
				}
			}
			if resource == "" {
				continue
			}
			if sub != "" {
				resource += "/" + sub
			}
			if !yield(verb+" "+resource, m) {
				return
			}
		}
	}
}
