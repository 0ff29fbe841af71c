package setup

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pushpki"
	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/push"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/listener"
)

// Scheme returns the types the operator reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, v1beta2.AddToScheme, networkingv1.AddToScheme,
		pushpki.AddToScheme,
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
	// PKI and Listener are nil when the push path is off.
	PKI      *pushpki.PKI
	Listener *listener.Server
	Pushed   *push.Tracker
}

// New builds the manager and the controllers from opts and the PKI's
// certOpts. reg receives the operator's own metrics (the manager's registry
// in production).
func New(ctx context.Context, cfg *rest.Config, opts options.Options, certOpts config.Options, reg prometheus.Registerer, log logr.Logger) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.ListenerMode == "direct" && opts.ListenerAddr != "" && len(certOpts.EndpointDNSNames) == 0 {
		return nil, errors.New("--listener-mode=direct needs the listener's certificate: set --cert-endpoint-dns-names")
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = options.KCPQPS, options.KCPBurst
	writes, wrapRuntime := timeWrites(cfg, opts)
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
	kubeconfigAllow, err := kubeconfig.ParseAllow(opts.RuntimeKubeconfigAllow)
	if err != nil {
		return nil, fmt.Errorf("--runtime-kubeconfig-allow: %w", err)
	}
	runtimes := remote.New(mgr.GetClient(), mgr.GetConfig(), scheme, remote.Options{
		QPS: options.RuntimeQPS, Burst: options.RuntimeBurst, Timeout: opts.RuntimeTimeout, IdleTTL: opts.RuntimeIdleTTL,
		SingleCluster: opts.Gates.Enabled(options.SingleCluster), UserAgent: "lifecycle-manager", Kubeconfig: kubeconfigAllow, WrapTransport: wrapRuntime,
		Unlabelled: unlabelledSecrets(mgr, opts.Shard),
	}, runtimeMetrics, log.WithName("runtimes"))
	if err := mgr.Add(runtimes); err != nil {
		return nil, fmt.Errorf("adding the runtime client cache: %w", err)
	}
	b := &builder{mgr: mgr, opts: opts, certs: certOpts, reg: reg, runtimes: runtimes, log: log}
	if opts.Shard != "" {
		if b.shard, err = b.setupShard(ctx); err != nil {
			return nil, err
		}
	}
	if opts.AgentInstall() || opts.ListenerAddr != "" {
		if b.push, err = newPushPath(mgr, opts, certOpts, reg, log); err != nil {
			return nil, err
		}
	}
	if err := b.addControllers(ctx); err != nil {
		return nil, err
	}
	if err := b.addGovernor(writes); err != nil {
		return nil, err
	}
	if err := addConversionWebhook(mgr, opts, b.push, certOpts.Namespace, log); err != nil {
		return nil, err
	}
	op := &Operator{Manager: mgr, Runtimes: runtimes}
	if b.push != nil {
		op.PKI, op.Listener, op.Pushed = b.push.pki, b.push.listener, b.push.tracker
	}
	return op, nil
}

// timeWrites times the operator's KCP writes (through cfg) and its runtime
// writes (through the wrapper it returns) for the fan-out governor; a
// target of 0 leaves those writes untimed.
func timeWrites(cfg *rest.Config, opts options.Options) ([]*schedule.Meter, transport.WrapperFunc) {
	var writes []*schedule.Meter
	if opts.FanOutLatencyTarget > 0 {
		kcpWrites := schedule.NewMeter("KCP", opts.FanOutLatencyTarget)
		cfg.Wrap(kcpWrites.Wrap)
		writes = append(writes, kcpWrites)
	}
	var wrapRuntime transport.WrapperFunc
	if opts.FanOutLatencyTarget > 0 {
		runtimeWrites := schedule.NewMeter("runtime", options.RuntimeWriteLatencyTarget)
		wrapRuntime = runtimeWrites.Wrap
		writes = append(writes, runtimeWrites)
	}
	return writes, wrapRuntime
}

func managerOptions(opts options.Options, scheme *runtime.Scheme) manager.Options {
	namespaces := map[string]cache.Config{}
	for _, ns := range opts.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	// Only the Secrets of Kymas are cached: a KCP namespace may hold many others.
	kymaSecrets, _ := labels.NewRequirement(shared.KymaNameLabel, selection.Exists, nil)
	byObject := map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Label: labels.NewSelector().Add(*kymaSecrets)},
	}
	if opts.Shard != "" {
		addShardCaches(byObject, opts.Shard)
	}
	shutdown := opts.ShutdownTimeout
	lease, renew, retry := opts.Replicas.LeaseDuration, opts.Replicas.RenewDeadline, opts.Replicas.RetryPeriod
	return manager.Options{
		Scheme: scheme,
		MapperProvider: func(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
			m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
			if err != nil {
				return nil, fmt.Errorf("building the KCP's REST mapper: %w", err)
			}
			return remote.NewMemoMapper(m), nil
		},
		Cache: cache.Options{
			DefaultNamespaces: namespaces,
			ByObject:          byObject,
		},
		Metrics:                       metricsOptions(opts),
		HealthProbeBindAddress:        opts.HealthAddr,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              options.LeaseOf(opts.Shard),
		LeaderElectionNamespace:       opts.Namespaces[0],
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		GracefulShutdownTimeout:       &shutdown,
	}
}

// controllerOptions gives each controller its own rate limiter: per-item
// exponential backoff for failures, capped by a token bucket for all items.
func controllerOptions(opts options.Options, concurrency int) controller.Options {
	return controller.Options{
		MaxConcurrentReconciles: concurrency,
		RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](options.FailureBackoffBase, opts.RateLimiterMaxDelay),
			&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(options.ControllerQPS), options.ControllerBurst)},
		),
	}
}
