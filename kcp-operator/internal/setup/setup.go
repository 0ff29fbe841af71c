package setup

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	catalogctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/catalog"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
	manifestctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
	purgectrl "github.com/lifecycle-manager/kcp-operator/internal/controller/purge"
	watcherctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/watcher"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/recorder"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
	"github.com/lifecycle-manager/kcp-operator/internal/requeue"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// Scheme returns the types the operator reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, v1beta2.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the scheme: %w", err)
		}
	}
	return s, nil
}

// Operator is the assembled operator.
type Operator struct {
	Manager  manager.Manager
	Runtimes *remote.Cache
}

// New builds the manager and the controllers from opts. reg receives the
// operator's own metrics (the manager's registry in production).
func New(ctx context.Context, cfg *rest.Config, opts options.Options, reg prometheus.Registerer, log logr.Logger) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.KCPQPS, opts.KCPBurst
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, scheme))
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}
	runtimeMetrics, err := remote.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	runtimes := remote.New(mgr.GetClient(), mgr.GetConfig(), scheme, remote.Options{
		QPS: opts.RuntimeQPS, Burst: opts.RuntimeBurst, Timeout: opts.RuntimeTimeout, IdleTTL: opts.RuntimeIdleTTL,
		SingleCluster: opts.SingleCluster, UserAgent: "lifecycle-manager",
	}, runtimeMetrics, log.WithName("runtimes"))
	if err := mgr.Add(runtimes); err != nil {
		return nil, fmt.Errorf("adding the runtime client cache: %w", err)
	}
	if err := addControllers(ctx, mgr, runtimes, opts, reg); err != nil {
		return nil, err
	}
	return &Operator{Manager: mgr, Runtimes: runtimes}, nil
}

func managerOptions(opts options.Options, scheme *runtime.Scheme) manager.Options {
	namespaces := map[string]cache.Config{}
	for _, ns := range opts.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	// Only the Secrets of Kymas are cached: a KCP namespace may hold many others.
	kymaSecrets, _ := labels.NewRequirement(shared.KymaNameLabel, selection.Exists, nil)
	leaderNS := opts.LeaderElectionNS
	if leaderNS == "" {
		leaderNS = opts.Namespaces[0]
	}
	shutdown := opts.ShutdownTimeout
	return manager.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}: {Label: labels.NewSelector().Add(*kymaSecrets)},
			},
		},
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:        opts.HealthAddr,
		PprofBindAddress:              opts.PprofAddr,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       leaderNS,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &shutdown,
	}
}

func addControllers(ctx context.Context, mgr manager.Manager, runtimes *remote.Cache, opts options.Options, reg prometheus.Registerer) error {
	if err := resolve.Indexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := kymactrl.IndexKymas(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	kymaMetrics, err := kymactrl.NewMetrics(reg)
	if err != nil {
		return err
	}
	kyma := &kymactrl.Reconciler{
		KCP:      mgr.GetClient(),
		Runtimes: runtimes,
		Resolver: resolve.New(mgr.GetClient()),
		Events:   recorder.Bounded{EventRecorder: mgr.GetEventRecorder("lifecycle-manager")},
		Metrics:  kymaMetrics,
		Requeue: requeue.Requeue{
			Success: opts.RequeueSuccess, Busy: opts.RequeueBusy, Warning: opts.RequeueWarning,
			Error: opts.RequeueError, Jitter: opts.RequeueJitter,
		},
		Required: []string{v1beta2.ConditionModuleCatalog},
	}
	if err := kyma.SetupWithManager(mgr, controllerOptions(opts, opts.KymaConcurrency), opts.TemplateChangeSpread); err != nil {
		return err
	}
	cat := &catalogctrl.Reconciler{
		KCP: mgr.GetClient(), Runtimes: runtimes, Resync: opts.RequeueSuccess, Retry: opts.RequeueError,
	}
	if err := cat.SetupWithManager(mgr, controllerOptions(opts, opts.CatalogConcurrency), opts.TemplateChangeSpread); err != nil {
		return err
	}
	purgeMetrics, err := purgectrl.NewMetrics(reg)
	if err != nil {
		return err
	}
	purge := &purgectrl.Reconciler{
		KCP: mgr.GetClient(), Runtimes: runtimes, Events: recorder.Bounded{EventRecorder: mgr.GetEventRecorder("lifecycle-manager-purge")},
		Metrics: purgeMetrics, Grace: opts.PurgeGracePeriod, Cleanups: kyma.Cleanups,
	}
	if err := purge.SetupWithManager(mgr, controllerOptions(opts, 2)); err != nil {
		return err
	}
	if err := addManifestController(mgr, runtimes, opts, reg); err != nil {
		return err
	}
	if !opts.WatcherController {
		return nil
	}
	return addWatcherController(mgr, opts)
}

func addWatcherController(mgr manager.Manager, opts options.Options) error {
	for _, kind := range []string{"Gateway", "VirtualService"} {
		gvk := networkingv1.SchemeGroupVersion.WithKind(kind)
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return fmt.Errorf("the Istio %s CRD (%s) is not installed in the KCP; install Istio's CRDs or pass --watcher-controller=false: %w",
				kind, gvk.GroupVersion(), err)
		}
	}
	ns := opts.GatewayNamespace
	if ns == "" {
		ns = opts.Namespaces[0]
	}
	w := &watcherctrl.Reconciler{
		KCP: mgr.GetClient(), Events: recorder.Bounded{EventRecorder: mgr.GetEventRecorder("lifecycle-manager-watcher")}, Retry: opts.RequeueError,
		Gateway: watcherctrl.GatewayConfig{
			Name: opts.GatewayName, Namespace: ns, Hosts: opts.GatewayHosts, CredentialName: opts.GatewaySecret,
			Selector: opts.GatewaySelector, Port: opts.GatewayPort,
			Labels: map[string]string{shared.WatcherGatewayLabel: shared.WatcherGatewayDefault},
		},
	}
	return w.SetupWithManager(mgr, controllerOptions(opts, 2))
}

// controllerOptions gives each controller its own rate limiter: per-item
// exponential backoff for failures, capped by a token bucket for all items.
func controllerOptions(opts options.Options, concurrency int) controller.Options {
	return controller.Options{
		MaxConcurrentReconciles: concurrency,
		RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](opts.RateLimiterBaseDelay, opts.RateLimiterMaxDelay),
			&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(opts.RateLimiterQPS), opts.RateLimiterBurst)},
		),
	}
}

func addManifestController(mgr manager.Manager, runtimes *remote.Cache, opts options.Options, reg prometheus.Registerer) error {
	layerMetrics, err := oci.NewMetrics(reg)
	if err != nil {
		return err
	}
	fetcher, err := oci.NewFetcher(oci.Options{
		CacheDir: opts.LayerCacheDir, MaxCacheBytes: opts.LayerCacheMB << 20, MaxLayerBytes: opts.MaxLayerMB << 20,
		InsecureRegistries: opts.InsecureRegistries, Timeout: opts.RegistryTimeout,
		Logger: mgr.GetLogger().WithName("layers"), Metrics: layerMetrics,
	})
	if err != nil {
		return fmt.Errorf("setting up the layer cache: %w", err)
	}
	renderMetrics, err := render.NewMetrics(reg)
	if err != nil {
		return err
	}
	manifestMetrics, err := manifestctrl.NewMetrics(reg)
	if err != nil {
		return err
	}
	m := &manifestctrl.Reconciler{
		KCP: mgr.GetClient(), Runtimes: runtimes, Events: recorder.Bounded{EventRecorder: mgr.GetEventRecorder("lifecycle-manager-manifest")},
		Metrics: manifestMetrics, Parallelism: opts.ApplyParallelism,
		Requeue: requeue.Requeue{
			Success: opts.RequeueSuccess, Busy: opts.RequeueBusy, Warning: opts.RequeueWarning,
			Error: opts.RequeueError, Jitter: opts.RequeueJitter,
		},
		Source: &manifestctrl.LayerSource{
			Fetcher:    fetcher,
			Renderer:   render.New(render.Options{CacheEntries: opts.RenderCacheEntries, Metrics: renderMetrics}),
			Secrets:    mgr.GetAPIReader(),
			PullSecret: opts.RegistryPullSecret,
		},
	}
	return m.SetupWithManager(mgr, controllerOptions(opts, opts.ManifestConcurrency))
}
