package docgen

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/setup"
)

// Metric is one metric the operator registers.
type Metric struct {
	Name, Type, Help string
	// Labels are its variable labels; ConstLabels the values of its
	// constant ones (a metric registered once per controller, say).
	Labels      []string
	ConstLabels map[string][]string
}

// OperatorMetrics builds the operator as kcp-operator does, every part on
// (the push path, the Watcher controller), against the KCP at kcp, and
// describes what it registers. Nothing is started.
func OperatorMetrics(ctx context.Context, kcp *rest.Config) ([]Metric, error) {
	opts := options.Default()
	opts.LeaderElect = false
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.ListenerAddr = "127.0.0.1:0"
	opts.AgentKCPAddress = "events.kcp.example.com:443"
	rec := &recorder{reg: prometheus.NewRegistry()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := setup.New(ctx, kcp, opts, config.Defaults(), rec, logr.Discard()); err != nil {
		return nil, fmt.Errorf("building the operator: %w", err)
	}
	return rec.describe()
}

// recorder is a Registerer that keeps what is registered.
type recorder struct {
	mu         sync.Mutex
	reg        *prometheus.Registry
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		return err //nolint:wrapcheck // the Registerer's own error, as callers expect it (AlreadyRegisteredError)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *recorder) Unregister(c prometheus.Collector) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collectors = slices.DeleteFunc(r.collectors, func(x prometheus.Collector) bool { return x == c })
	return r.reg.Unregister(c)
}

// describe merges the descriptions of every collector by metric name.
func (r *recorder) describe() ([]Metric, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byName := map[string]*Metric{}
	var errs []error
	for _, c := range r.collectors {
		descs := describeAll(c)
		types := typesOf(c, descs)
		for _, d := range descs {
			m, err := parseDesc(d.String())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			m.Type = types[d.String()]
			if prev, ok := byName[m.Name]; ok {
				merge(prev, m)
				continue
			}
			byName[m.Name] = &m
		}
	}
	out := make([]Metric, 0, len(byName))
	for _, m := range byName {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Metric) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

func merge(into *Metric, m Metric) {
	for k, vs := range m.ConstLabels {
		for _, v := range vs {
			if !slices.Contains(into.ConstLabels[k], v) {
				into.ConstLabels[k] = append(into.ConstLabels[k], v)
			}
		}
		slices.Sort(into.ConstLabels[k])
	}
	if into.Type == unknownType {
		into.Type = m.Type
	}
}

func describeAll(c prometheus.Collector) []*prometheus.Desc {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	var out []*prometheus.Desc
	for d := range ch {
		out = append(out, d)
	}
	return out
}

// unknownType is the type of a metric whose collector decides it only
// when it has series to report, and had none here.
const unknownType = "—"

// typesOf finds the type of each of c's descriptions from what c collects:
// a description carries no type. A vector without children collects
// nothing, so one series is made where some are missing (through
// WithLabelValues, also of a type that wraps a vector).
func typesOf(c prometheus.Collector, descs []*prometheus.Desc) map[string]string {
	types := collectTypes(c)
	for _, d := range descs {
		if _, ok := types[d.String()]; !ok && probe(c, d) {
			types = collectTypes(c)
			break
		}
	}
	for _, d := range descs {
		if _, ok := types[d.String()]; !ok {
			types[d.String()] = unknownType
		}
	}
	return types
}

func collectTypes(c prometheus.Collector) map[string]string {
	ms := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ms); close(ms) }()
	types := map[string]string{}
	for m := range ms {
		var out dto.Metric
		if m.Write(&out) != nil {
			continue
		}
		typ := "untyped"
		switch {
		case out.Counter != nil:
			typ = "counter"
		case out.Gauge != nil:
			typ = "gauge"
		case out.Histogram != nil:
			typ = "histogram"
		case out.Summary != nil:
			typ = "summary"
		}
		types[m.Desc().String()] = typ
	}
	return types
}

// probe makes one series of c through its WithLabelValues, if it has
// one, with a placeholder for each of d's labels.
func probe(c prometheus.Collector, d *prometheus.Desc) (made bool) {
	m, err := parseDesc(d.String())
	if err != nil || len(m.Labels) == 0 {
		return false
	}
	with := reflect.ValueOf(c).MethodByName("WithLabelValues")
	if !with.IsValid() || !with.Type().IsVariadic() || with.Type().NumIn() != 1 || with.Type().In(0) != reflect.TypeFor[[]string]() {
		return false
	}
	defer func() {
		if recover() != nil { // labels the collector does not take: its type stays unknown
			made = false
		}
	}()
	with.CallSlice([]reflect.Value{reflect.ValueOf(slices.Repeat([]string{"x"}, len(m.Labels)))})
	return true
}

// descPattern matches prometheus.Desc's String.
var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), unit: "(?:[^"\\]|\\.)*", constLabels: \{(.*)\}, variableLabels: \{(.*)\}\}$`)

// parseDesc reads a Desc's String: its fields are not exported.
func parseDesc(s string) (Metric, error) {
	parts := descPattern.FindStringSubmatch(s)
	if parts == nil {
		return Metric{}, fmt.Errorf("unexpected metric description %s", s)
	}
	name, err := strconv.Unquote(parts[1])
	if err != nil {
		return Metric{}, fmt.Errorf("the name in %s: %w", s, err)
	}
	help, err := strconv.Unquote(parts[2])
	if err != nil {
		return Metric{}, fmt.Errorf("the help in %s: %w", s, err)
	}
	m := Metric{Name: name, Help: help, ConstLabels: map[string][]string{}}
	if parts[4] != "" {
		for _, l := range strings.Split(parts[4], ",") {
			m.Labels = append(m.Labels, strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"))
		}
	}
	rest := parts[3]
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			return Metric{}, fmt.Errorf("the constant labels in %s", s)
		}
		quoted, err := strconv.QuotedPrefix(after)
		if err != nil {
			return Metric{}, fmt.Errorf("the constant labels in %s: %w", s, err)
		}
		v, _ := strconv.Unquote(quoted) // a quoted prefix unquotes
		m.ConstLabels[key] = append(m.ConstLabels[key], v)
		rest = strings.TrimPrefix(after[len(quoted):], ",")
	}
	return m, nil
}
