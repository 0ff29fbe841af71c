package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/e2e/harness"
	"github.com/lifecycle-manager/e2e/promtest"
)

// scrapeInterval replaces the ServiceMonitor's interval (30s): a run lasts
// minutes, and each scenario's metrics should be in the TSDB.
const scrapeInterval = 2 * time.Second

// monitoring is the suite's Prometheus: it scrapes the operator (with the
// listener it embeds) and the agents from the start and evaluates the
// chart's alert rules; 99_prometheus_test.go reads it after the scenarios.
type monitoring struct {
	server *promtest.Server
	// err says why there is no server; the check fails with it.
	err     error
	started time.Time
	// alerts are the alert names of the chart's PrometheusRule.
	alerts []string
}

var prom monitoring

// startMonitoring starts Prometheus as the chart's ServiceMonitor and
// PrometheusRule describe it, with static targets instead of Kubernetes
// service discovery: the operator's metrics address, and the agents' (local
// mode) as their chart's metrics port serves them.
func startMonitoring(ctx context.Context, h *harness.Harness) monitoring {
	m := monitoring{started: time.Now()}
	if h.MetricsAddr == "" {
		return monitoring{err: fmt.Errorf("the harness knows no metrics address of the operator (clusters mode: %s)", harness.EnvMetricsAddr)}
	}
	bin, err := promtest.Binaries(ctx, harness.RepoRoot())
	if err != nil {
		return monitoring{err: err}
	}
	objs, err := harness.RenderChart(filepath.Join(harness.RepoRoot(), "charts", "kcp-operator"), "kcp-operator", harness.Namespace, map[string]any{
		"namespaces":     []any{harness.Namespace},
		"listener":       map[string]any{"mode": "direct"},
		"agent":          map[string]any{"kcpAddress": "localhost"},
		"serviceMonitor": map[string]any{"enabled": true},
		"prometheusRule": map[string]any{"enabled": true},
	})
	if err != nil {
		return monitoring{err: err}
	}
	opts := promtest.Options{BinDir: bin, Dir: filepath.Join(h.RunDir, "prometheus")}
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return monitoring{err: fmt.Errorf("creating %s: %w", opts.Dir, err)}
	}
	if opts.Port, err = harness.FreePort(ctx); err != nil {
		return monitoring{err: err}
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceMonitor":
			jobs, err := operatorJobs(o, objs, h.MetricsAddr)
			if err != nil {
				return monitoring{err: err}
			}
			opts.Jobs = append(opts.Jobs, jobs...)
		case "PrometheusRule":
			spec, _ := o.Object["spec"].(map[string]any)
			if opts.Rules, err = promtest.RulesFile(spec); err != nil {
				return monitoring{err: err}
			}
			m.alerts = promtest.Alerts(spec)
		}
	}
	if len(opts.Jobs) == 0 || len(opts.Rules) == 0 {
		return monitoring{err: fmt.Errorf("the chart rendered no ServiceMonitor or no PrometheusRule")}
	}
	if agents := agentJob(h); len(agents.Targets) > 0 {
		opts.Jobs = append(opts.Jobs, agents)
	}
	if m.server, err = promtest.Start(ctx, opts); err != nil {
		return monitoring{err: err}
	}
	return m
}

// operatorJobs are the ServiceMonitor's endpoints as scrape jobs of the
// operator's metrics address, labelled as the Prometheus Operator labels
// the series of a Service's endpoint: the job is the Service's name.
func operatorJobs(sm *unstructured.Unstructured, objs []*unstructured.Unstructured, addr string) ([]promtest.Job, error) {
	var service string
	for _, o := range objs {
		if o.GetKind() == "Service" && o.GetLabels()["app.kubernetes.io/component"] == "metrics" {
			service = o.GetName()
		}
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	var jobs []promtest.Job
	for _, e := range endpoints {
		ep, _ := e.(map[string]any)
		if ep["port"] != "metrics" {
			return nil, fmt.Errorf("the ServiceMonitor scrapes port %v, which the harness does not know", ep["port"])
		}
		timeout, err := time.ParseDuration(fmt.Sprint(ep["scrapeTimeout"]))
		if err != nil {
			return nil, fmt.Errorf("the ServiceMonitor's scrapeTimeout: %w", err)
		}
		path, _ := ep["path"].(string)
		scheme, _ := ep["scheme"].(string)
		jobs = append(jobs, promtest.Job{
			Name: service, Path: path, Scheme: scheme,
			Interval: scrapeInterval, Timeout: min(timeout, scrapeInterval),
			Targets: []string{addr},
			Labels:  map[string]string{"namespace": harness.Namespace, "service": service, "endpoint": "metrics"},
		})
	}
	return jobs, nil
}

// agentJobName is the agents' job: their chart's Service name.
const agentJobName = "skr-agent"

// agentJob scrapes every runtime's agent on its metrics port (plain HTTP,
// /metrics, as the skr-agent chart's Service names it); clusters mode
// leaves the agents to their runtime's Prometheus.
func agentJob(h *harness.Harness) promtest.Job {
	job := promtest.Job{Name: agentJobName, Interval: scrapeInterval, Timeout: scrapeInterval, Labels: map[string]string{"service": "skr-agent"}}
	for _, rt := range h.Runtimes {
		if rt.AgentMetricsPort != 0 {
			job.Targets = append(job.Targets, fmt.Sprintf("127.0.0.1:%d", rt.AgentMetricsPort))
		}
	}
	slices.Sort(job.Targets)
	return job
}
