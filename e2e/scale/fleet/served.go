package fleet

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/lifecycle-manager/e2e/harness"
	"github.com/lifecycle-manager/e2e/scale/metrics"
	"github.com/lifecycle-manager/e2e/scale/proc"
	"github.com/lifecycle-manager/e2e/scale/report"
)

// served is what the API servers answered, per "VERB resource": the KCP
// and all runtime servers summed. The harness's own requests are in it
// too (its kubelet's Deployment status writes in the runtimes, its
// labelling in the resync wave); the phases say which are theirs. cpu is
// the CPU seconds of each program on the machine, which all share its
// cores.
type served struct {
	kcp, runtime map[string]float64
	cpu          map[string]float64
}

// readServed scrapes every API server's request counters and reads the
// CPU time of every program.
func (f *Fleet) readServed(ctx context.Context) (served, error) {
	kcp, err := scrapeServer(ctx, f.KCP)
	if err != nil {
		return served{}, err
	}
	cpu, err := proc.Default.CPUByProgram(f.program)
	if err != nil {
		return served{}, err
	}
	s := served{kcp: kcp, runtime: map[string]float64{}, cpu: cpu}
	for _, c := range f.Servers {
		counts, err := scrapeServer(ctx, c)
		if err != nil {
			return served{}, err
		}
		for k, v := range counts {
			s.runtime[k] += v
		}
	}
	return s, nil
}

// servedSince is the requests answered and the CPU time spent between two
// readings, without the entries that did not move.
func servedSince(before, after served) *report.Served {
	return &report.Served{KCP: moved(before.kcp, after.kcp), Runtime: moved(before.runtime, after.runtime),
		CPUSeconds: moved(before.cpu, after.cpu)}
}

// program names the part of the run a process is, for CPUByProgram.
func (f *Fleet) program(pid int, argv []string) string {
	if pid == os.Getpid() {
		return "harness"
	}
	switch filepath.Base(argv[0]) {
	case "kcp-operator":
		return "operator"
	case "skr-agent":
		return "agents"
	case "etcd":
		return "etcd"
	case "kube-apiserver":
		if u, err := url.Parse(f.KCP.Config.Host); err == nil && slices.Contains(argv, "--secure-port="+u.Port()) {
			return "KCP API server"
		}
		return "runtime API servers"
	}
	return ""
}

func moved(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range delta(a, b) {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

func scrapeServer(ctx context.Context, c *harness.Cluster) (map[string]float64, error) {
	snap, err := scrapeServerMetrics(ctx, c)
	if err != nil {
		return nil, err
	}
	return snap.ServedRequests(), nil
}

func scrapeServerMetrics(ctx context.Context, c *harness.Cluster) (metrics.Snapshot, error) {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return nil, fmt.Errorf("a metrics client for %s: %w", c.Name, err)
	}
	defer hc.CloseIdleConnections()
	snap, err := metrics.Scrape(ctx, hc, strings.TrimSuffix(c.Config.Host, "/")+"/metrics")
	if err != nil {
		return nil, fmt.Errorf("the request metrics of %s: %w", c.Name, err)
	}
	return snap, nil
}

// kcpWritesWatched are the KCP requests whose time a push series reports:
// the pushed edit's own write (the spec patch) and the release's writes
// beside it.
var kcpWritesWatched = []string{"PATCH kymas", "APPLY kymas/status", "APPLY manifests", "APPLY manifests/status"}

// kcpMeanMs is the KCP API server's mean time per request of each watched
// kind it answered between two scrapes; kinds it did not answer are left out.
func kcpMeanMs(before, after map[string]metrics.Durations) map[string]float64 {
	out := map[string]float64{}
	for _, key := range kcpWritesWatched {
		a, b := before[key], after[key]
		if n := b.Count - a.Count; n > 0 {
			out[key] = 1000 * (b.Seconds - a.Seconds) / n
		}
	}
	return out
}
