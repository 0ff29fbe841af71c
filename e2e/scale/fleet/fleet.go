package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/e2e/harness"
)

// Fleet is the machinery of one run: the control planes, the registry,
// the built programs and the operator process.
type Fleet struct {
	opts Options
	Bin  harness.Binaries
	KCP  *harness.Cluster
	// Servers are the runtime API servers; runtime i lives on
	// Servers[i % len(Servers)] in namespace RuntimeNamespace(i).
	Servers  []*harness.Cluster
	Registry string

	// kcp and servers are clients without a client-side rate limit: the
	// harness must not be the bottleneck it measures.
	kcp     client.WithWatch
	servers []client.WithWatch
	// kymas holds the KCP's Kymas for Count.
	kymas cache.Cache

	// Operators are the operator processes, one per shard; Operator is the
	// first (the coordinator of a sharded run).
	Operators []*operator
	Operator  *operator
	stops     []func()
	// boundEndsRun is set when no phase follows the bound: its copies
	// then go with the servers instead of being deleted one by one, which
	// at 10,000 Kymas overloaded the runtime API servers for over 25
	// minutes after the measurement.
	boundEndsRun bool

	// background is the context of the kubelet and the agents; Close
	// cancels it before it stops the servers they talk to.
	background     context.Context
	stopBackground context.CancelFunc
	agents         sync.WaitGroup

	mu sync.Mutex
	// agentMetrics are the metrics addresses of the running agents.
	agentMetrics map[int]string
	// webhookPorts are the agents' webhook ports, reserved before the
	// agents bind them: no other program may take one.
	webhookPorts []int
}

// Start builds the programs and starts the control planes and the registry.
func Start(ctx context.Context, opts Options) (f *Fleet, err error) {
	f = &Fleet{opts: opts}
	f.background, f.stopBackground = context.WithCancel(context.WithoutCancel(ctx))
	f.stops = append(f.stops, f.stopBackground)
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := os.MkdirAll(opts.RunDir, 0o755); err != nil {
		return f, fmt.Errorf("creating the run folder: %w", err)
	}
	opts.Progress("building kcp-operator, skr-agent and modulectl")
	if f.Bin, err = harness.Build(ctx, filepath.Join(opts.RunDir, "bin")); err != nil {
		return f, err
	}
	opts.Progress("starting the KCP and %d runtime API server(s) (kube-apiserver + etcd each)", opts.RuntimeServers)
	if f.KCP, f.kcp, err = f.startCluster("kcp", testenv.Options{}); err != nil {
		return f, err
	}
	for i := range opts.RuntimeServers {
		// Each runtime's agent has a Service: more than envtest's /24 holds.
		// The watch cache's consistency check lists every object of a
		// resource from etcd every 5 minutes: on a server holding a
		// thousand runtimes' objects it was a fifth of the server's CPU,
		// a cost a runtime holding only its own objects does not have.
		c, cl, err := f.startCluster(fmt.Sprintf("runtimes-%d", i+1), testenv.Options{WithoutAPICRDs: true,
			APIServerFlags: map[string]string{
				"service-cluster-ip-range": "10.0.0.0/16",
				"feature-gates":            "DetectCacheInconsistency=false",
			}})
		if err != nil {
			return f, err
		}
		f.Servers, f.servers = append(f.Servers, c), append(f.servers, cl)
	}
	if err := harness.PrepareKCP(ctx, f.kcp); err != nil {
		return f, err
	}
	if err := f.startKymaCache(ctx); err != nil {
		return f, err
	}
	host, stop := harness.StartRegistry()
	f.stops = append(f.stops, stop)
	f.Registry = host + "/modules"
	return f, nil
}

func (f *Fleet) startCluster(name string, opts testenv.Options) (*harness.Cluster, client.WithWatch, error) {
	c, err := harness.StartCluster(name, f.opts.RunDir, opts)
	if err != nil {
		return nil, nil, err
	}
	f.stops = append(f.stops, func() { _ = c.Stop() })
	cl, err := unlimitedClient(c.Config)
	return c, cl, err
}

func unlimitedClient(cfg *rest.Config) (client.WithWatch, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.NewScheme()})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", cfg.Host, err)
	}
	return c, nil
}

// Close stops everything the fleet started, newest first.
func (f *Fleet) Close() {
	f.stopBackground()
	f.agents.Wait()
	_ = f.StopOperators()
	for i := len(f.stops) - 1; i >= 0; i-- {
		f.stops[i]()
	}
	f.stops = nil
}

// server is the client of runtime i's API server.
func (f *Fleet) server(i int) client.WithWatch { return f.servers[i%len(f.servers)] }

// KymaName is the name of runtime i's Kyma.
func KymaName(i int) string { return fmt.Sprintf("kyma-%05d", i) }

// RuntimeID is the ID of runtime i.
func RuntimeID(i int) string { return fmt.Sprintf("runtime-%05d", i) }

// RuntimeNamespace is runtime i's namespace on its shared API server.
func RuntimeNamespace(i int) string { return fmt.Sprintf("runtime-%05d", i) }
