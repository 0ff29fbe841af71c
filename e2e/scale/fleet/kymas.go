package fleet

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
)

// forEach runs fn for 0..n-1 on workers goroutines and stops at the first
// error.
func forEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// CreateKymas gives every runtime its access Secret and its Kyma with all
// modules. Runtime i < len(agentPorts) has a real agent, which its API
// server calls at agentPorts[i].
func (f *Fleet) CreateKymas(ctx context.Context, agentPorts []int) error {
	kubeconfigs := make([][]byte, len(f.Servers))
	for n, s := range f.Servers {
		raw, err := os.ReadFile(s.Kubeconfig)
		if err != nil {
			return fmt.Errorf("reading the kubeconfig of %s: %w", s.Name, err)
		}
		kubeconfigs[n] = raw
	}
	return forEach(ctx, f.opts.Kymas, 32, func(ctx context.Context, i int) error {
		port := 0
		if i < len(agentPorts) {
			port = agentPorts[i]
		}
		return f.createKyma(ctx, i, kubeconfigs[i%len(f.Servers)], port)
	})
}

func (f *Fleet) createKyma(ctx context.Context, i int, kubeconfig []byte, agentPort int) error {
	name := KymaName(i)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + name, Namespace: Namespace,
			Labels: map[string]string{shared.KymaNameLabel: name}},
		Data: map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}
	if err := f.kcp.Create(ctx, secret); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating the access Secret of %s: %w", name, err)
	}
	kyma := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace,
			Labels:      map[string]string{shared.RuntimeIDLabel: RuntimeID(i)},
			Annotations: map[string]string{shared.SyncNamespaceAnnotation: RuntimeNamespace(i)}},
		Spec: v1beta2.KymaSpec{Channel: Channel},
	}
	if agentPort != 0 {
		kyma.Annotations[shared.AgentWebhookURLAnnotation] = "https://127.0.0.1:" + strconv.Itoa(agentPort)
	}
	for m := 1; m <= f.opts.Modules; m++ {
		kyma.Spec.Modules = append(kyma.Spec.Modules, v1beta2.Module{Name: ModuleName(m)})
	}
	if err := f.kcp.Create(ctx, kyma); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating Kyma %s: %w", name, err)
	}
	return nil
}

// Census counts the Kymas that are Ready with every module, and those whose
// module carries version (empty: any version).
type Census struct {
	Ready, Kymas int
	// OnVersion counts Ready Kymas whose first module runs the version
	// asked for.
	OnVersion int
	// ByShard counts Ready Kymas per shard label (none without shards).
	ByShard map[string]int
}

// startKymaCache keeps the KCP's Kymas in memory for Count: listing 10,000
// Kymas from the API server every few seconds took a sixth of its CPU, which
// the operator then lacked.
func (f *Fleet) startKymaCache(ctx context.Context) error {
	cfg := rest.CopyConfig(f.KCP.Config)
	cfg.QPS, cfg.Burst = -1, 0
	noCopies := true
	c, err := cache.New(cfg, cache.Options{Scheme: testenv.NewScheme(),
		DefaultNamespaces: map[string]cache.Config{Namespace: {}}, DefaultUnsafeDisableDeepCopy: &noCopies})
	if err != nil {
		return fmt.Errorf("creating the Kyma cache: %w", err)
	}
	if _, err := c.GetInformer(ctx, &v1beta2.Kyma{}); err != nil {
		return fmt.Errorf("watching Kymas: %w", err)
	}
	go func() { _ = c.Start(f.background) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the Kyma cache did not sync: %w", context.Cause(ctx))
	}
	f.kymas = c
	return nil
}

// Count counts the Kymas of the KCP (read-only: the cache does not copy).
func (f *Fleet) Count(ctx context.Context, version string) (Census, error) {
	var list v1beta2.KymaList
	if err := f.kymas.List(ctx, &list, client.InNamespace(Namespace)); err != nil {
		return Census{}, fmt.Errorf("listing Kymas: %w", err)
	}
	c := Census{Kymas: len(list.Items), ByShard: map[string]int{}}
	for i := range list.Items {
		k := &list.Items[i]
		if k.Status.State != shared.StateReady || len(k.Status.Modules) != f.opts.Modules {
			continue
		}
		c.Ready++
		if shard := k.Labels[shared.ShardLabel]; shard != "" {
			c.ByShard[shard]++
		}
		for _, m := range k.Status.Modules {
			if m.Name == ModuleName(1) && (version == "" || m.Version == version) {
				c.OnVersion++
			}
		}
	}
	return c, nil
}
