// Command kcp-operator runs the lifecycle manager in the control plane.
// Every flag is listed, with its default, in docs/reference/flags.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/conversion"
	"github.com/lifecycle-manager/kcp-operator/internal/crdupgrade"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/setup"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kcp-operator:", err)
		os.Exit(1)
	}
}

func run() error {
	opts := options.Default()
	certOpts := config.Defaults()
	zapOpts := zap.Options{}
	fs := options.FlagSet("kcp-operator", &opts, &certOpts, &zapOpts)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	opts.Replicas.ListenerEndpointIP = os.Getenv(options.PodIPEnv)
	log := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(log)

	cfg, err := kcpConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if opts.UpgradeCRDs {
		return upgradeCRDs(ctx, cfg, opts.Webhook, log)
	}
	op, err := setup.New(ctx, cfg, opts, certOpts, ctrlmetrics.Registry, log)
	if err != nil {
		return err
	}
	log.Info("starting", "namespaces", opts.Namespaces, "featureGates", opts.Gates)
	if err := op.Manager.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

func kcpConfig(path string) (*rest.Config, error) {
	if path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("loading the KCP kubeconfig %s: %w", path, err)
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("finding the KCP kubeconfig: %w", err)
	}
	return cfg, nil
}

// upgradeCRDs applies the API's CRDs, migrating stored versions first;
// with --webhook-service they serve v1beta1 through the
// operator's conversion webhook.
func upgradeCRDs(ctx context.Context, cfg *rest.Config, webhook options.Webhook, log logr.Logger) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("building the scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating the KCP client: %w", err)
	}
	crds, err := crd.All()
	if err != nil {
		return err
	}
	target, ok, err := webhook.Target()
	if err != nil {
		return err
	}
	if ok {
		converted := conversion.Configure(crds, target)
		log.Info("the CRDs convert through the webhook", "crds", converted, "webhook", target.String())
	}
	if _, err := crdupgrade.Upgrade(ctx, c, crds, log.WithName("crd-upgrade")); err != nil {
		return fmt.Errorf("upgrading the CRDs: %w", err)
	}
	return nil
}
