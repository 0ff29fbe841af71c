package fleet

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/e2e/harness"
	"github.com/lifecycle-manager/e2e/scale/metrics"
	"github.com/lifecycle-manager/e2e/scale/report"
	"github.com/lifecycle-manager/e2e/scale/stats"
)

// agentSecret is the agent's certificate Secret in a runtime namespace
// (certs/config's DefaultRuntimeSecret).
const agentSecret = "skr-agent-tls"

// AllocateAgentPorts picks the webhook ports of the runtimes that run a
// real agent.
func AllocateAgentPorts(ctx context.Context, n int) ([]int, error) {
	ports, err := harness.FreePorts(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("allocating agent webhook ports: %w", err)
	}
	return ports, nil
}

// RunAgents runs a real skr-agent for runtime i < len(ports) once the
// operator installed its Deployment and Secret, as the kubelet would run
// its Pod, until Close. The other runtimes' API servers find no agent
// Service and go on (the agent's failurePolicy is Ignore).
func (f *Fleet) RunAgents(ports []int) {
	ctx := f.background
	f.mu.Lock()
	f.webhookPorts = slices.Clone(ports)
	f.mu.Unlock()
	procs := make([]*harness.Process, len(ports))
	f.agents.Go(func() {
		for ctx.Err() == nil {
			for i := range ports {
				if procs[i] != nil && procs[i].Running() {
					continue
				}
				p, err := f.startAgent(ctx, i, ports)
				if err != nil && ctx.Err() == nil {
					f.opts.Progress("agent of %s: %v", RuntimeID(i), err)
				}
				procs[i] = p
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
		for _, p := range procs {
			if p != nil {
				_ = p.Stop()
			}
		}
	})
}

// startAgent starts the agent of runtime i when its Deployment and Secret
// exist; nil without error means not yet.
func (f *Fleet) startAgent(ctx context.Context, i int, ports []int) (*harness.Process, error) {
	c := f.server(i)
	ns := RuntimeNamespace(i)
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "skr-agent-" + ns}, d); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	secret := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentSecret}, secret)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(f.opts.RunDir, "agents", ns)
	if err := harness.MountSecret(dir, secret.Data); err != nil {
		return nil, fmt.Errorf("writing the agent's certificate files: %w", err)
	}
	metricsPort, err := f.freePort(ctx)
	if err != nil {
		return nil, err
	}
	p := harness.AgentProcess(f.Bin.Agent, filepath.Join(f.opts.RunDir, "logs", ns+"-skr-agent.log"), dir, d, ports[i], metricsPort)
	p.Name = "skr-agent (" + ns + ")"
	if i >= f.opts.PushRuntimes {
		p.Args = append(p.Args, "--send-resource-versions=false") // the public agent's body
	}
	if err := p.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.agentMetrics == nil {
		f.agentMetrics = map[int]string{}
	}
	f.agentMetrics[i] = "127.0.0.1:" + strconv.Itoa(metricsPort)
	return p, nil
}

// freePort is a free port that is none of the agents' webhook ports,
// which agents not yet started have not bound: the operator's metrics
// server once took one, and that runtime's agent never started.
func (f *Fleet) freePort(ctx context.Context) (int, error) {
	f.mu.Lock()
	reserved := slices.Clone(f.webhookPorts)
	f.mu.Unlock()
	for {
		p, err := harness.FreePort(ctx)
		if err != nil || !slices.Contains(reserved, p) {
			return p, err
		}
	}
}

// agentCounters sums the push counters of the running agents; an agent
// that cannot be scraped is counted as unreachable.
func (f *Fleet) agentCounters(ctx context.Context) *report.AgentCounters {
	f.mu.Lock()
	addrs := make([]string, 0, len(f.agentMetrics))
	for _, a := range f.agentMetrics {
		addrs = append(addrs, a)
	}
	f.mu.Unlock()
	out := &report.AgentCounters{Failed: map[string]float64{}}
	var deliverySum, deliveries float64
	for _, addr := range addrs {
		s, err := metrics.Scrape(ctx, http.DefaultClient, "http://"+addr+"/metrics")
		if err != nil {
			f.opts.Progress("scraping an agent: %v", err)
			out.Unreachable++
			continue
		}
		out.Queued += s.Sum("skr_agent_admission_requests_total", metrics.Labels{"decision": "queued"})
		out.Forwarded += s.Sum("skr_agent_events_forwarded_total", nil)
		out.Coalesced += s.Sum("skr_agent_events_coalesced_total", nil)
		out.Retried += s.Sum("skr_agent_events_retried_total", nil)
		for reason, n := range s.By("skr_agent_events_failed_total", "reason", nil) {
			out.Failed[reason] += n
		}
		deliverySum += s.HistogramSum("skr_agent_delivery_duration_seconds", nil)
		deliveries += s.Sum("skr_agent_delivery_duration_seconds", nil)
	}
	out.DeliveryMeanMs = 1000 * stats.Ratio(deliverySum, deliveries)
	return out
}
