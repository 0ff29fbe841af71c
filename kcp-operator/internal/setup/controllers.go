package setup

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/agent"
	"github.com/lifecycle-manager/kcp-operator/internal/conditionboard"
	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
	catalogctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/catalog"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
	manifestctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/manifest"
	purgectrl "github.com/lifecycle-manager/kcp-operator/internal/controller/purge"
	skrwebhookctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/skrwebhook"
	watcherctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/watcher"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/pullsecret"
	"github.com/lifecycle-manager/kcp-operator/internal/recorder"
	"github.com/lifecycle-manager/kcp-operator/internal/remote"
	"github.com/lifecycle-manager/kcp-operator/internal/removal"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/schedule"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// builder assembles the controllers.
type builder struct {
	mgr      manager.Manager
	opts     options.Options
	certs    config.Options
	reg      prometheus.Registerer
	runtimes *remote.Cache
	push     *pushPath
	log      logr.Logger
	renderer *render.Renderer
	// board carries the catalog's and the agent's conditions to the Kyma
	// controller's status write.
	board *conditionboard.Board
	// pacers are the controllers' fan-outs, steered by the schedule Governor.
	pacers []schedule.Paced
	// shard is this instance's part of the fleet; nil when unsharded.
	shard *shard.Shard
}

// guardKymas and guardManifests hold a Kyma's reconciles while another
// shard may still write its objects; nil when unsharded.
func (b *builder) guardKymas() shard.Wrapper {
	if b.shard == nil {
		return nil
	}
	return b.shard.Guard.Kymas
}

func (b *builder) guardManifests() shard.Wrapper {
	if b.shard == nil {
		return nil
	}
	return b.shard.Guard.Manifests
}

// coordinator is whether this instance keeps the fleet-wide objects: the
// unsharded one, or the first shard of the list.
func (b *builder) coordinator() bool { return b.shard == nil || b.shard.Coordinator }

func (b *builder) requeue() schedule.Requeue {
	o := b.opts
	return schedule.Requeue{Success: o.RequeueSuccess, Busy: o.RequeueBusy, BusyMax: o.RequeueBusyMax, Warning: o.RequeueWarning, Error: o.RequeueError, Jitter: options.RequeueJitter}
}

// requeueUnderWay is requeue for a controller whose rechecks finish its
// work: they go before new work.
func (b *builder) requeueUnderWay() schedule.Requeue {
	q := b.requeue()
	q.UnderWay = true
	return q
}

func (b *builder) events(name string) recorder.Bounded {
	return recorder.Bounded{EventRecorder: b.mgr.GetEventRecorder(name)}
}

func (b *builder) addControllers(ctx context.Context) error {
	fi := b.mgr.GetFieldIndexer()
	for _, index := range []func(context.Context) error{
		func(ctx context.Context) error { return resolve.Indexes(ctx, fi) },
		func(ctx context.Context) error { return kymactrl.IndexKymas(ctx, fi) },
		func(ctx context.Context) error { return index.Register(ctx, fi) },
	} {
		if err := index(ctx); err != nil {
			return err
		}
	}
	renderMetrics, err := render.NewMetrics(b.reg)
	if err != nil {
		return err
	}
	b.renderer = render.New(render.Options{
		CacheEntries: options.RenderCacheEntries, Metrics: renderMetrics,
		Limits: render.Limits{
			Timeout: render.DefaultTimeout, MaxBytes: render.DefaultMaxBytes, MaxObjects: render.DefaultMaxObjects,
		},
		Concurrency: render.DefaultConcurrency, Isolate: true,
	})
	b.board = conditionboard.NewBoard()
	b.board.Settle = kymactrl.Settle
	skr, err := b.skrWebhook()
	if err != nil {
		return err
	}
	kyma, err := b.kyma(skr)
	if err != nil {
		return err
	}
	cat := &catalogctrl.Reconciler{Guard: b.guardKymas(), KCP: b.mgr.GetClient(), Runtimes: b.runtimes, Resync: b.opts.RequeueSuccess, Retry: b.opts.RequeueError, Board: b.board}
	if cat.PullSecret, err = b.pullSecret(); err != nil {
		return err
	}
	pacer, err := b.pacer("catalog")
	if err != nil {
		return err
	}
	if err := cat.SetupWithManager(b.mgr, controllerOptions(b.opts, options.CatalogConcurrency), pacer); err != nil {
		return err
	}
	if err := b.purge(kyma.Cleanups); err != nil {
		return err
	}
	if err := b.manifest(); err != nil {
		return err
	}
	if b.opts.WatcherController {
		return b.watcher()
	}
	if !b.coordinator() {
		return nil
	}
	// Direct mode: Watchers need no route, only their status.
	r := &watcherctrl.Reconciler{KCP: b.mgr.GetClient(), Events: b.events("lifecycle-manager-watcher"), Direct: true}
	return r.SetupWithManager(b.mgr, controllerOptions(b.opts, 1))
}

// pacer paces how a controller fans a change out to the Kymas: at most
// --fan-out-rate per second; its backlog is a metric.
func (b *builder) pacer(controller string) (*schedule.Pacer, error) {
	p := schedule.NewPacer(schedule.Pace{Rate: b.opts.FanOutRate})
	if err := b.mgr.Add(p); err != nil {
		return nil, fmt.Errorf("adding the %s fan-out: %w", controller, err)
	}
	b.pacers = append(b.pacers, p)
	return p, schedule.RegisterBacklog(b.reg, controller, p)
}

// addGovernor slows the fan-outs while the KCP or runtime writes that
// writes time are slow; without meters (both latency targets 0) their
// rate is fixed.
func (b *builder) addGovernor(writes []*schedule.Meter) error {
	if len(writes) == 0 {
		return nil
	}
	g, err := schedule.NewGovernor(writes, b.reg, b.log.WithName("headroom"), b.pacers...)
	if err != nil {
		return err
	}
	if err := b.mgr.Add(g); err != nil {
		return fmt.Errorf("adding the fan-out governor: %w", err)
	}
	return nil
}

func (b *builder) kyma(skr *skrwebhookctrl.Reconciler) (*kymactrl.Reconciler, error) {
	m, err := kymactrl.NewMetrics(b.reg)
	if err != nil {
		return nil, err
	}
	components, err := b.components()
	if err != nil {
		return nil, err
	}
	r := &kymactrl.Reconciler{
		Guard: b.guardKymas(), KCP: b.mgr.GetClient(), Runtimes: b.runtimes, Resolver: resolve.New(b.mgr.GetClient(), b.opts.TemplateNamespaces...).WithSignatures(b.signatures()).WithComponents(components),
		Events: b.events("lifecycle-manager"), Metrics: m, Requeue: b.requeue(),
		Required: []string{v1beta2.ConditionModuleCatalog}, RequeueNoPush: b.opts.RequeueNoPush, Board: b.board,
	}
	if b.pullSecretName() != "" {
		r.Required = append(r.Required, pullsecret.Condition)
	}
	if skr != nil {
		r.Required = append(r.Required, v1beta2.ConditionSKRWebhook)
		r.Cleanups = append(r.Cleanups, skr.Cleanup)
	}
	if b.push != nil && b.push.kymaEvents != nil {
		r.Sources, r.Pushed = []source.Source{b.push.kymaEvents}, b.push.tracker
		r.Fresh, r.Recheck = b.push.kymaWaits, b.opts.PushRecheckDelay
	}
	r.Maintenance = kymactrl.NewMaintenance(b.opts.MaintenancePolicy, b.log.WithName("maintenance"))
	if err := kymactrl.ObserveMaintenance(b.reg, r.Maintenance); err != nil {
		return nil, err
	}
	r.Sources = append(r.Sources, r.Maintenance)
	r.Sources = append(r.Sources, b.board.Source())
	pacer, err := b.pacer("kyma")
	if err != nil {
		return nil, err
	}
	return r, r.SetupWithManager(b.mgr, controllerOptions(b.opts, b.opts.KymaConcurrency), pacer)
}

func (b *builder) skrWebhook() (*skrwebhookctrl.Reconciler, error) {
	if !b.opts.AgentInstall() {
		return nil, nil
	}
	installer, err := agent.NewInstaller(agent.Options{
		Image: b.opts.AgentImage, KCPAddress: b.opts.AgentKCPAddress, Contract: options.AgentContract,
		WebhookURL: b.opts.AgentWebhookURL, WebhookURLHosts: b.opts.AgentWebhookURLHosts, DriftWatch: b.opts.Gates.Enabled(options.ModuleDriftWatch), SecretName: b.push.pki.Options.RuntimeSecret,
		PullSecret: b.pullSecretName(),
	}, b.renderer)
	if err != nil {
		return nil, err
	}
	r := &skrwebhookctrl.Reconciler{
		Guard: b.guardKymas(), KCP: b.mgr.GetClient(), Runtimes: b.runtimes, PKI: b.push.pki, Installer: installer,
		SecretName: b.push.pki.Options.RuntimeSecret, Resync: b.opts.RequeueSuccess, Retry: b.opts.RequeueBusy,
		Events: b.events("lifecycle-manager-skrwebhook"), Board: b.board,
	}
	if b.push.agentEvents != nil {
		r.Sources = []source.Source{b.push.agentEvents}
	}
	pacer, err := b.pacer("skrwebhook")
	if err != nil {
		return nil, err
	}
	return r, r.SetupWithManager(b.mgr, controllerOptions(b.opts, b.opts.KymaConcurrency), pacer)
}

func (b *builder) purge(cleanups []kymactrl.RuntimeCleanup) error {
	m, err := purgectrl.NewMetrics(b.reg)
	if err != nil {
		return err
	}
	r := &purgectrl.Reconciler{
		Guard: b.guardKymas(), KCP: b.mgr.GetClient(), Runtimes: b.runtimes, Events: b.events("lifecycle-manager-purge"),
		Metrics: m, Grace: b.opts.PurgeGracePeriod, Cleanups: cleanups,
		Removal: removal.Rules{Protected: b.opts.ProtectedNamespaces, Adopt: b.opts.AdoptFrom},
	}
	return r.SetupWithManager(b.mgr, controllerOptions(b.opts, 2))
}

func (b *builder) manifest() error {
	layerMetrics, err := oci.NewMetrics(b.reg)
	if err != nil {
		return err
	}
	o := b.opts
	fetcher, err := oci.NewFetcher(oci.Options{
		CacheDir: o.LayerCacheDir, MaxCacheBytes: options.LayerCacheMB << 20, MaxLayerBytes: options.MaxLayerMB << 20,
		InsecureRegistries: o.AllInsecureRegistries(), Timeout: options.RegistryTimeout,
		Logger: b.log.WithName("layers"), Metrics: layerMetrics,
	})
	if err != nil {
		return fmt.Errorf("setting up the layer cache: %w", err)
	}
	m, err := manifestctrl.NewMetrics(b.reg)
	if err != nil {
		return err
	}
	policy, err := contentpolicy.Parse(o.ModuleDeniedKinds)
	if err != nil {
		return fmt.Errorf("--module-denied-kinds: %w", err)
	}
	policy = policy.WithPrivileged(o.ModulePrivileged)
	r := &manifestctrl.Reconciler{
		Guard: b.guardManifests(), KCP: b.mgr.GetClient(), APIReader: b.mgr.GetAPIReader(), Runtimes: b.runtimes, Events: b.events("lifecycle-manager-manifest"), Policy: policy,
		Metrics: m, Parallelism: options.ApplyParallelism, Requeue: b.requeueUnderWay(),
		Removal: removal.Rules{Protected: o.ProtectedNamespaces, Adopt: o.AdoptFrom}, AdoptFrom: o.AdoptFrom,
		Source: &manifestctrl.LayerSource{
			Fetcher: fetcher, Renderer: b.renderer, Secrets: b.mgr.GetAPIReader(), PullSecret: o.LayerPullSecret(),
			RuntimePullSecret: b.pullSecretName(),
		},
	}
	if b.push != nil && b.push.driftEvents != nil {
		r.Sources = []source.Source{b.push.driftEvents}
		r.Fresh, r.Recheck = b.push.manifestWaits, o.PushRecheckDelay
	}
	return r.SetupWithManager(b.mgr, controllerOptions(o, o.ManifestConcurrency))
}

func (b *builder) watcher() error {
	for _, kind := range []string{"Gateway", "VirtualService"} {
		gvk := networkingv1.SchemeGroupVersion.WithKind(kind)
		if _, err := b.mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return fmt.Errorf("the Istio %s CRD (%s) is not installed in the KCP; install Istio's CRDs or run the listener with --listener-mode=direct: %w",
				kind, gvk.GroupVersion(), err)
		}
	}
	o := b.opts
	hosts := b.certs.EndpointDNSNames
	if len(hosts) == 0 {
		hosts = []string{"*"}
	}
	r := &watcherctrl.Reconciler{
		KCP: b.mgr.GetClient(), Events: b.events("lifecycle-manager-watcher"), Retry: o.RequeueError,
		Gateway: watcherctrl.GatewayConfig{
			Name: o.GatewayName, Namespace: o.Namespaces[0], Hosts: hosts, CredentialName: b.certs.EndpointSecret,
			Selector: map[string]string{options.IngressGatewayLabel: options.IngressGatewayValue}, Port: options.GatewayPort,
			Labels: map[string]string{shared.WatcherGatewayLabel: shared.WatcherGatewayDefault},
		},
		Route: b.route(),
	}
	if !b.coordinator() {
		r.Gateway.Name = ""
	}
	return r.SetupWithManager(b.mgr, controllerOptions(o, 2))
}
