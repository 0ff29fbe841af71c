package publicmetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// EachSeries calls f with the labels and value of every counter or gauge
// series c collects.
func EachSeries(c prometheus.Collector, f func(labels map[string]string, value float64)) {
	ch := make(chan prometheus.Metric)
	go func() {
		c.Collect(ch)
		close(ch)
	}()
	for metric := range ch {
		var d dto.Metric
		if err := metric.Write(&d); err != nil {
			continue
		}
		labels := make(map[string]string, len(d.GetLabel()))
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		f(labels, d.GetCounter().GetValue()+d.GetGauge().GetValue())
	}
}
