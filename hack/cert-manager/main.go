// Command cert-manager runs the cert-manager controllers that a private CA
// needs (CA and self-signed issuers, Certificates, CertificateRequests and
// their approval) from cert-manager's own packages, for tests against an
// envtest API server: cert-manager's controller binary is a module that the
// Go module proxy does not serve, its library is. Built by
// hack/cert-manager.sh; not part of go.work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	// Each registers its controller with controller.Known() or its issuer
	// type with the issuers controllers, as cert-manager's binary does.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// controllers are the ones a CA issuer needs; ACME, Vault, Venafi, the
// ingress and gateway shims and the metrics controller are left out.
var controllers = []string{
	"issuers", "clusterissuers",
	"certificaterequests-approver", "certificaterequests-issuer-ca", "certificaterequests-issuer-selfsigned",
	"certificates-trigger", "certificates-issuing", "certificates-key-manager",
	"certificates-request-manager", "certificates-readiness", "certificates-revision-manager",
}

type options struct {
	kubeconfig, namespace, clusterResourceNamespace string
	workers                                         int
	backoffMin, backoffMax                          time.Duration
}

func main() {
	if err := start(); err != nil {
		klog.Background().Error(err, "cert-manager controllers stopped")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// start parses the flags and runs the controllers until SIGINT or SIGTERM.
func start() error {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	flag.StringVar(&o.namespace, "namespace", "", "only this namespace (empty: all)")
	flag.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", "kube-system", "namespace of the ClusterIssuers' Secrets")
	flag.IntVar(&o.workers, "workers", 5, "workers per controller")
	flag.DurationVar(&o.backoffMin, "request-backoff-min", time.Hour, "first wait after a failed CertificateRequest (cert-manager's default 1h)")
	flag.DurationVar(&o.backoffMax, "request-backoff-max", 32*time.Hour, "longest wait after failed CertificateRequests (cert-manager's default 32h)")
	klog.InitFlags(flag.CommandLine) // -v for cert-manager's log levels
	flag.Parse()
	if o.kubeconfig == "" {
		return errors.New("--kubeconfig is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return run(logf.NewContext(ctx, klog.Background(), "cert-manager"), o)
}

func run(ctx context.Context, o options) error {
	stopping := ctx
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         o.kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		Namespace:          o.namespace,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: o.clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: o.backoffMin,
			CertificateRequestMaximumBackoffDuration: o.backoffMax,
		},
	})
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	base, err := factory.Build()
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	known := controller.Known()
	g, ctx := errgroup.WithContext(ctx)
	for _, name := range controllers {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %s is not registered (known: %s)", name, strings.Join(sortedKeys(known), ", "))
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("constructing controller %s: %w", name, err)
		}
		g.Go(func() error {
			if err := c.Run(o.workers, ctx); err != nil {
				return fmt.Errorf("controller %s: %w", name, err)
			}
			return nil
		})
	}
	// The informers start after every controller registered its handlers.
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	klog.Background().Info("cert-manager controllers started", "controllers", controllers, "namespace", o.namespace)
	err = g.Wait()
	base.KubeSharedInformerFactory.Shutdown()
	base.SharedInformerFactory.Shutdown()
	// Asked to stop, whatever the controllers said while stopping is no failure.
	if err != nil && stopping.Err() == nil {
		return err
	}
	return nil
}

func sortedKeys(m map[string]controller.Constructor) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
