package options

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// Options are the operator's settings.
type Options struct {
	Kubeconfig string
	// UpgradeCRDs runs internal/crdupgrade instead of the operator.
	UpgradeCRDs      bool
	MetricsAddr      string
	HealthAddr       string
	PprofAddr        string
	LeaderElect      bool
	LeaderElectionID string
	LeaderElectionNS string
	Namespaces       []string
	ShutdownTimeout  time.Duration

	SingleCluster bool

	KCPQPS         float32
	KCPBurst       int
	RuntimeQPS     float32
	RuntimeBurst   int
	RuntimeTimeout time.Duration
	RuntimeIdleTTL time.Duration
	// RuntimeKubeconfigAllow are the kubeconfig features beyond inline
	// credentials that runtime kubeconfigs may use (internal/kubeconfig).
	RuntimeKubeconfigAllow []string

	KymaConcurrency     int
	CatalogConcurrency  int
	ManifestConcurrency int
	ApplyParallelism    int

	LayerCacheDir      string
	LayerCacheMB       int64
	MaxLayerMB         int64
	InsecureRegistries []string
	RegistryTimeout    time.Duration
	RenderCacheEntries int
	RegistryPullSecret string
	// Bounds of one module render (internal/render.Limits) and the
	// content refused before apply (internal/contentpolicy), from which
	// ModulePrivileged are partly exempt.
	RenderTimeout      time.Duration
	RenderMaxMB        int64
	RenderMaxObjects   int
	RenderConcurrency  int
	RenderIsolation    bool
	ModuleDeniedKinds  []string
	ModulePrivileged   []string
	TemplateNamespaces []string
	// ModuleSignaturePolicy and ModuleTrustSecret: see internal/signature.
	ModuleSignaturePolicy string
	ModuleTrustSecret     string
	// SKRImagePullSecret is copied into every runtime (runtimepull.go).
	SKRImagePullSecret string

	RequeueSuccess time.Duration
	RequeueBusy    time.Duration
	RequeueBusyMax time.Duration
	RequeueWarning time.Duration
	RequeueError   time.Duration
	RequeueJitter  float64

	TemplateChangeSpread time.Duration
	// FanOutRate caps the Kymas per second each controller re-enqueues
	// after a template, release meta or Watcher change (internal/enqueue).
	FanOutRate float64
	// FanOutLatencyTarget is the KCP write latency beyond which the
	// fan-outs slow down (internal/headroom); 0 keeps FanOutRate fixed.
	FanOutLatencyTarget time.Duration
	// FanOutRuntimeLatencyTarget is the same for the writes to runtimes;
	// 0 leaves them out.
	FanOutRuntimeLatencyTarget time.Duration
	PurgeGracePeriod           time.Duration
	// MaintenancePolicy is the file of the maintenance policy
	// (internal/maintenance); empty: upgrades that require downtime run at once.
	MaintenancePolicy string
	// ProtectedNamespaces are never deleted by a module's prune, removal or
	// purge (internal/removal), nor is a runtime's sync namespace.
	ProtectedNamespaces []string
	// AdoptFrom are managed-by values and field managers whose runtime
	// objects a module takes over as its own; by default the public
	// lifecycle manager's.
	AdoptFrom []string

	WatcherController bool
	GatewayName       string
	GatewayNamespace  string
	GatewayHosts      []string
	GatewaySecret     string
	GatewaySelector   map[string]string
	GatewayPort       int64

	ListenerAddr           string
	ListenerMode           string
	ListenerTrustedProxies []string
	ListenerManagers       []string
	ListenerRuntimeRate    float64
	ListenerRuntimeBurst   int
	AgentInstall           bool
	AgentKCPAddress        string
	AgentImage             string
	AgentContract          string
	AgentWebhookURL        string
	AgentWebhookURLHosts   []string
	AgentRerenderSpread    time.Duration
	ModuleDriftWatch       bool
	RequeueNoPush          time.Duration
	PushRecheckDelay       time.Duration
	PushRuntimeRate        float64
	PushRuntimeBurst       int

	RateLimiterBaseDelay time.Duration
	RateLimiterMaxDelay  time.Duration
	RateLimiterQPS       float64
	RateLimiterBurst     int

	// Webhook is the conversion webhook of the v1beta1 API (webhook.go).
	Webhook Webhook
	// DescriptorRegistry holds the descriptors templates do not embed (registry.go).
	DescriptorRegistry DescriptorRegistry
	// Replicas are the leader election timings and the leader's event
	// endpoint (replicas.go).
	Replicas Replicas
}

// PublicLifecycleManager are the managed-by value and the field managers
// of what the public lifecycle manager writes in runtimes: module objects
// (its applier), default CRs (created under its CR finalizer's manager),
// the runtime Kyma, kyma-system and the catalog.
func PublicLifecycleManager() []string {
	return []string{
		shared.PublicManagedByValue,
		"declarative.kyma-project.io/applier",
		"resource.kyma-project.io/finalizer",
		"operator.kyma-project.io/lifecycle-manager",
		"kyma-sync-context",
		"catalog-sync",
	}
}

// Default returns the defaults, tuned for a KCP with thousands of runtimes
// where the push path brings changes and the resync is the safety net.
func Default() Options {
	return Options{
		MetricsAddr:      ":8080",
		Webhook:          defaultWebhook(),
		Replicas:         defaultReplicas(),
		HealthAddr:       ":8081",
		LeaderElect:      true,
		LeaderElectionID: "lifecycle-manager.operator.kyma-project.io",
		Namespaces:       []string{"kcp-system"},
		ShutdownTimeout:  30 * time.Second,
		AdoptFrom:        PublicLifecycleManager(),

		KCPQPS:         150,
		KCPBurst:       300,
		RuntimeQPS:     20,
		RuntimeBurst:   40,
		RuntimeTimeout: 30 * time.Second,
		RuntimeIdleTTL: 3 * time.Hour,

		KymaConcurrency:     8,
		CatalogConcurrency:  4,
		ManifestConcurrency: 16,
		ApplyParallelism:    8,

		LayerCacheDir:      filepath.Join(os.TempDir(), "lifecycle-manager", "layers"),
		LayerCacheMB:       1024,
		MaxLayerMB:         64,
		RegistryTimeout:    time.Minute,
		RenderCacheEntries: 512,
		RenderTimeout:      render.DefaultTimeout,
		RenderMaxMB:        render.DefaultMaxBytes >> 20,
		RenderMaxObjects:   render.DefaultMaxObjects,
		RenderConcurrency:  render.DefaultConcurrency,
		RenderIsolation:    true,
		ModuleDeniedKinds:  contentpolicy.Defaults(),
		// warn, not enforce: an upgrade must not refuse every unsigned
		// module; and without --module-trust-secret nothing is checked.
		ModuleSignaturePolicy: string(signature.PolicyWarn),

		RequeueSuccess: 2 * time.Hour,
		RequeueBusy:    5 * time.Second,
		RequeueBusyMax: time.Minute,
		RequeueWarning: 2 * time.Minute,
		RequeueError:   time.Minute,
		RequeueJitter:  0.1,

		TemplateChangeSpread: 2 * time.Minute,
		FanOutRate:           5,
		FanOutLatencyTarget:  100 * time.Millisecond,
		// Above the KCP's target: runtimes are remote, and a write to one
		// crosses the network and its admission webhooks.
		FanOutRuntimeLatencyTarget: 250 * time.Millisecond,
		PurgeGracePeriod:           5 * time.Minute,
		ProtectedNamespaces:        []string{"default", "kube-system", "kube-public", "kube-node-lease", "kyma-system"},

		WatcherController: true,
		GatewayName:       "lifecycle-manager-events",
		GatewayHosts:      []string{"*"},
		GatewaySecret:     "lifecycle-manager-endpoint-tls",
		GatewaySelector:   map[string]string{"istio": "ingressgateway"},
		GatewayPort:       443,

		ListenerAddr:           ":8082",
		ListenerMode:           "gateway",
		ListenerTrustedProxies: []string{"127.0.0.0/8", "::1/128"},
		ListenerRuntimeRate:    100,
		ListenerRuntimeBurst:   1000,
		AgentInstall:           true,
		AgentImage:             "ghcr.io/lifecycle-manager/skr-agent:latest",
		AgentContract:          "v2",
		AgentRerenderSpread:    2 * time.Minute,
		ModuleDriftWatch:       true,
		RequeueNoPush:          time.Minute,
		PushRecheckDelay:       500 * time.Millisecond,
		PushRuntimeRate:        10,
		PushRuntimeBurst:       100,

		RateLimiterBaseDelay: 500 * time.Millisecond,
		RateLimiterMaxDelay:  5 * time.Minute,
		RateLimiterQPS:       100,
		RateLimiterBurst:     500,
	}
}

// Bind registers the flags on fs with o's current values as defaults,
// each annotated with its group (GroupAnnotation).
func (o *Options) Bind(fs *pflag.FlagSet) {
	for _, g := range o.groups() {
		bindGroup(fs, g.name, g.bind)
	}
}

type group struct {
	name string
	bind func(*pflag.FlagSet)
}

// groups are the operator's flags in the order --help and
// docs/reference/flags.md list them.
func (o *Options) groups() []group {
	return []group{
		{"Manager, KCP and runtime clients", o.bindManager},
		{"Leader election and replicas", o.Replicas.bind},
		{"Module installation and registries", o.bindModules},
		{"Descriptors in the registry", o.DescriptorRegistry.bind},
		{"Render limits and content policy", o.bindRenderLimits},
		{"Requeue, fan-out and maintenance windows", o.bindRequeue},
		{"Ownership, removal and purge", o.bindRemoval},
		{"Watcher controller and event gateway", o.bindWatcher},
		{"Push path", o.bindPush},
		{"Retries of failed reconciles", o.bindRetries},
		{"Conversion webhook (v1beta1)", o.Webhook.bind},
	}
}

// bindManager binds the flags of the manager, the KCP and runtime clients.
func (o *Options) bindManager(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the KCP; empty means KUBECONFIG, then the in-cluster config.")
	fs.BoolVar(&o.UpgradeCRDs, "upgrade-crds", o.UpgradeCRDs, "Apply this operator's CRDs to the KCP and exit, first moving objects stored in versions other than the storage version (v1beta1 of the public lifecycle manager) to it; with --webhook-service or --webhook-url they serve v1beta1 through the conversion webhook. The chart runs it as a pre-install and pre-upgrade hook.")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "Address of the Prometheus metrics endpoint; 0 disables it.")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, "Address of the pprof endpoint; empty disables it.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader so that only one replica reconciles.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.StringVar(&o.LeaderElectionNS, "leader-election-namespace", o.LeaderElectionNS, "Namespace of the leader election Lease; empty means the first watched namespace.")
	fs.StringSliceVar(&o.Namespaces, "namespaces", o.Namespaces, "KCP namespaces the operator watches (Kymas, templates, Secrets); the cache holds nothing else.")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "How long running reconciles and servers get to finish on shutdown.")

	fs.BoolVar(&o.SingleCluster, "single-cluster", o.SingleCluster, "Treat the KCP itself as every Kyma's runtime (local use).")

	fs.Float32Var(&o.KCPQPS, "kcp-qps", o.KCPQPS, "Requests per second to the KCP API server.")
	fs.IntVar(&o.KCPBurst, "kcp-burst", o.KCPBurst, "Burst of requests to the KCP API server.")
	fs.Float32Var(&o.RuntimeQPS, "runtime-qps", o.RuntimeQPS, "Requests per second to each runtime API server.")
	fs.IntVar(&o.RuntimeBurst, "runtime-burst", o.RuntimeBurst, "Burst of requests to each runtime API server.")
	fs.DurationVar(&o.RuntimeTimeout, "runtime-timeout", o.RuntimeTimeout, "Timeout of each request to a runtime API server.")
	fs.DurationVar(&o.RuntimeIdleTTL, "runtime-client-idle-ttl", o.RuntimeIdleTTL, "Runtime clients unused for this long are dropped; keep it above --requeue-success, or every resync reconnects and rediscovers the runtime's API.")
	fs.StringSliceVar(&o.RuntimeKubeconfigAllow, "runtime-kubeconfig-allow", o.RuntimeKubeconfigAllow, "Kubeconfig features runtime Secrets may use beyond inline credentials (token, client certificate and key, CA data): exec, files, proxy-url, insecure-skip-tls-verify, basic-auth, impersonation. Each lets whoever writes a runtime Secret make the operator do more (docs/security.md, Runtime kubeconfigs); unknown values stop the operator at start.")

	fs.IntVar(&o.KymaConcurrency, "kyma-concurrency", o.KymaConcurrency, "Kymas reconciled in parallel.")
	fs.IntVar(&o.CatalogConcurrency, "catalog-concurrency", o.CatalogConcurrency, "Module catalogs synced into runtimes in parallel (each sync writes up to 8 objects at once, within --runtime-qps).")
}

// bindModules binds the flags of module installation and registries.
func (o *Options) bindModules(fs *pflag.FlagSet) {
	fs.IntVar(&o.ManifestConcurrency, "manifest-concurrency", o.ManifestConcurrency, "Manifests (module installations) reconciled in parallel.")
	fs.IntVar(&o.ApplyParallelism, "apply-parallelism", o.ApplyParallelism, "Objects of one module applied or checked in parallel.")

	fs.StringVar(&o.LayerCacheDir, "layer-cache-dir", o.LayerCacheDir, "Disk cache of module layers, by digest; empty disables it.")
	fs.Int64Var(&o.LayerCacheMB, "layer-cache-mb", o.LayerCacheMB, "Size bound of the layer cache in MiB.")
	fs.Int64Var(&o.MaxLayerMB, "max-layer-mb", o.MaxLayerMB, "Largest module layer accepted, in MiB.")
	fs.StringSliceVar(&o.InsecureRegistries, "insecure-registries", o.InsecureRegistries, "Registries (host[:port]; a host without a port means every port) reached over plain HTTP. No other registry is, loopback and private addresses included, and no request, redirect or token realm goes to a plain-HTTP address not listed: module descriptors name the registries.")
	fs.DurationVar(&o.RegistryTimeout, "registry-timeout", o.RegistryTimeout, "Timeout of one layer download.")
	fs.IntVar(&o.RenderCacheEntries, "render-cache-entries", o.RenderCacheEntries, "Rendered modules kept in memory, by layer digest and values.")
	fs.StringSliceVar(&o.TemplateNamespaces, "template-namespaces", o.TemplateNamespaces, "Namespaces besides the Kyma's own that a namespace/name module reference may name a ModuleTemplate in; empty: only the Kyma's own. A reference to another namespace is Error on the module, with the reason.")
	fs.StringVar(&o.ModuleSignaturePolicy, "module-signature-policy", o.ModuleSignaturePolicy, "What happens to a module whose ModuleTemplate is unsigned or whose signature does not verify against --module-trust-secret: off (nothing is checked), warn (installed; a Warning Event and the Kyma's ModuleSignatures condition say why) or enforce (refused: the module is Error and nothing of it is applied). Without --module-trust-secret nothing is checked. A Kyma labelled operator.kyma-project.io/module-signature-policy may raise it for itself.")
	fs.StringVar(&o.ModuleTrustSecret, "module-trust-secret", o.ModuleTrustSecret, "Secret (namespace/name) whose keys hold the trust anchors of module signatures as PEM: PUBLIC KEY blocks (ECDSA or Ed25519) and CA CERTIFICATE blocks; read again within 10s of a change.")
	fs.StringVar(&o.RegistryPullSecret, "registry-pull-secret", o.RegistryPullSecret, "Pull Secret (namespace/name, type dockerconfigjson) for every module registry; a template can name its own with the label operator.kyma-project.io/oci-registry-cred.")
	fs.StringVar(&o.SKRImagePullSecret, "skr-image-pull-secret", o.SKRImagePullSecret, "Image pull Secret (name in the first watched namespace, or namespace/name) copied into every runtime's namespace under its name, kept equal to the KCP's, and named in the imagePullSecrets (and env SKR_IMG_PULL_SECRET) of module Deployments and StatefulSets and of the agent; a change reaches every runtime at the fan-out pace, and the Kyma condition SKRImagePullSecretSync reports the copy. Same name and meaning as in the public lifecycle manager.")
}

// bindRenderLimits binds the bounds of a module render and the content policy.
func (o *Options) bindRenderLimits(fs *pflag.FlagSet) {
	fs.DurationVar(&o.RenderTimeout, "render-timeout", o.RenderTimeout, "Longest render of one module (layer downloads aside); a module over it is Error and not rendered again for 10 minutes.")
	fs.Int64Var(&o.RenderMaxMB, "render-max-mb", o.RenderMaxMB, "Largest YAML one module may render, in MiB: raw manifests uncompressed, or a chart's rendered templates and CRDs. An isolated Helm render may use 64 MiB + 8 × this of heap.")
	fs.IntVar(&o.RenderMaxObjects, "render-max-objects", o.RenderMaxObjects, "Most objects one module may render.")
	fs.IntVar(&o.RenderConcurrency, "render-concurrency", o.RenderConcurrency, "Renders running at once (a render abandoned at its deadline keeps its place until it ends); each may hold about 13 times --render-max-mb while it parses.")
	fs.BoolVar(&o.RenderIsolation, "render-isolation", o.RenderIsolation, "Render Helm charts in a child process (the operator's binary again) that is killed at --render-timeout or beyond 64 MiB + 8 × --render-max-mb of heap; without it, a looping chart is abandoned at the deadline but runs on inside the operator.")
	fs.StringSliceVar(&o.ModuleDeniedKinds, "module-denied-kinds", o.ModuleDeniedKinds, "Rendered objects a module may not apply, as [GROUP/]KIND[:CONDITION] with CONDITION always (default), cluster-admin (a binding to the ClusterRole cluster-admin), foreign (a webhook configuration not named for the module, or calling a URL), wildcard (a ClusterRole or Role granting every verb in every group or on every resource of a group not the module's, or aggregating others; a binding of such a role) or broad (a webhook configuration matching every resource of a group not the module's, or Secrets); \"\" denies nothing. The module's default CR is judged likewise. See docs/modules.md, What a module may render.")
	fs.StringSliceVar(&o.ModulePrivileged, "module-privileged", o.ModulePrivileged, "Modules exempt from the wildcard and broad conditions of --module-denied-kinds (and from no other rule): modules trusted with cluster-wide power, e.g. whose manager needs every verb on every resource, or whose webhook sees every Secret.")
}

// bindRequeue binds the flags of requeue intervals, fan-out pacing and maintenance windows.
func (o *Options) bindRequeue(fs *pflag.FlagSet) {
	fs.DurationVar(&o.RequeueSuccess, "requeue-success", o.RequeueSuccess, "Resync of a Ready Kyma and its Manifests (jittered); the push path brings changes sooner.")
	fs.DurationVar(&o.RequeueBusy, "requeue-busy", o.RequeueBusy, "Recheck of a Manifest while its module is installed or deleted, and of a Kyma being deleted (a Processing Kyma waits for news instead).")
	fs.DurationVar(&o.RequeueBusyMax, "requeue-busy-max", o.RequeueBusyMax,
		"Longest requeue of a Kyma or Manifest that stays Processing or Deleting: each recheck waits half the time its status has been unchanged, from --requeue-busy up to this. Until its status has been unchanged this long, a Manifest's recheck goes before new Manifests, so that Kymas turn Ready as their modules do. Also how long a new Kyma's first Processing status and a Processing Kyma's progress wait in memory for the write that ends the Processing.")
	fs.DurationVar(&o.RequeueWarning, "requeue-warning", o.RequeueWarning, "Requeue of a Kyma in Warning.")
	fs.DurationVar(&o.RequeueError, "requeue-error", o.RequeueError, "Requeue of a Kyma in Error.")
	fs.Float64Var(&o.RequeueJitter, "requeue-jitter", o.RequeueJitter, "Random share added to every requeue interval (0.1 = up to +10%), so that Kymas do not resync in lockstep.")
	fs.DurationVar(&o.TemplateChangeSpread, "template-change-spread", o.TemplateChangeSpread, "A changed ModuleTemplate or ModuleReleaseMeta re-enqueues its Kymas evenly over this window (longer where --fan-out-rate needs it).")
	fs.Float64Var(&o.FanOutRate, "fan-out-rate", o.FanOutRate, "Kymas per second, at most, that each controller re-enqueues after ModuleTemplate, ModuleReleaseMeta or Watcher changes, one change after another: a release to 10,000 runtimes at 5/s takes 33 minutes and leaves the API servers room for pushed changes. 0: no limit.")
	fs.DurationVar(&o.FanOutLatencyTarget, "fan-out-latency-target", o.FanOutLatencyTarget, "While most of the operator's KCP writes take longer than this, the fan-outs slow down (halved at most every 2 s, to 1/32 of --fan-out-rate at the least) and speed up again by 1/50 of the rate per second once they do not: a release yields a busy KCP to pushed changes. 0: a fixed --fan-out-rate.")
	fs.DurationVar(&o.FanOutRuntimeLatencyTarget, "fan-out-runtime-latency-target", o.FanOutRuntimeLatencyTarget, "The same for the operator's writes to the runtimes, all runtimes together: while most take longer than this, the fan-outs slow down, so that a release yields busy runtime API servers to pushed changes. 0: runtime writes do not steer the pace.")
	fs.StringVar(&o.MaintenancePolicy, "maintenance-policy", o.MaintenancePolicy, "Maintenance policy file (YAML or JSON, read again when it changes, e.g. a mounted ConfigMap): upgrades to a module version that requires downtime wait for the runtime's window unless the Kyma skips windows. Empty: such upgrades run at once (the log says so at startup). See docs/operating.md, Maintenance windows.")
}

// bindRemoval binds the flags of what modules may take over and delete.
func (o *Options) bindRemoval(fs *pflag.FlagSet) {
	fs.DurationVar(&o.PurgeGracePeriod, "purge-grace-period", o.PurgeGracePeriod, "A Kyma still being deleted after this long is purged.")
	fs.StringSliceVar(&o.ProtectedNamespaces, "protected-namespaces", o.ProtectedNamespaces, "Namespaces no module deletes, even one it created (prune, removal and purge); a runtime's sync namespace is always protected.")
	fs.StringSliceVar(&o.AdoptFrom, "adopt-from", o.AdoptFrom, "Values of the managed-by label and field managers whose runtime objects a module takes over as its own; the default names the public lifecycle manager's, so that a fleet it ran is taken over, and --adopt-from= adopts nothing. Objects of any other owner are left to it (the Manifest is Warning).")
}

// bindWatcher binds the flags of the Watcher controller and the Istio Gateway it keeps.
func (o *Options) bindWatcher(fs *pflag.FlagSet) {
	fs.BoolVar(&o.WatcherController, "watcher-controller", o.WatcherController, "Run the Watcher controller (needs the Istio Gateway and VirtualService CRDs in the KCP).")
	fs.StringVar(&o.GatewayName, "istio-gateway-name", o.GatewayName, "Istio Gateway of the event endpoint that the operator keeps; empty leaves the Gateway to someone else.")
	fs.StringVar(&o.GatewayNamespace, "istio-gateway-namespace", o.GatewayNamespace, "Namespace of that Gateway; empty means the first watched namespace.")
	fs.StringSliceVar(&o.GatewayHosts, "istio-gateway-hosts", o.GatewayHosts, "Hosts of that Gateway, e.g. the KCP's event domain.")
	fs.StringVar(&o.GatewaySecret, "istio-gateway-secret", o.GatewaySecret, "Secret (tls.crt, tls.key, ca.crt) the Gateway uses for mutual TLS.")
	fs.StringToStringVar(&o.GatewaySelector, "istio-gateway-selector", o.GatewaySelector, "Labels of the Istio ingress gateway pods.")
	fs.Int64Var(&o.GatewayPort, "istio-gateway-port", o.GatewayPort, "HTTPS port of the Gateway.")
}

// bindPush binds the flags of the push path: listener, agents and the push budget.
func (o *Options) bindPush(fs *pflag.FlagSet) {
	fs.StringVar(&o.ListenerAddr, "listener-bind-address", o.ListenerAddr, "Address of the event listener that the agents push to; empty disables the push path.")
	fs.StringVar(&o.ListenerMode, "listener-mode", o.ListenerMode, "gateway: an Istio gateway terminates mTLS and passes the client certificate in X-Forwarded-Client-Cert; direct: the listener terminates mTLS itself with the endpoint certificate.")
	fs.StringSliceVar(&o.ListenerTrustedProxies, "listener-trusted-proxies", o.ListenerTrustedProxies, "CIDRs whose X-Forwarded-Client-Cert the listener believes (gateway mode).")
	fs.Float64Var(&o.ListenerRuntimeRate, "listener-runtime-rate", o.ListenerRuntimeRate, "Events per second one runtime may push to the listener on average (a token bucket per runtime ID, over all managers); beyond it and --listener-runtime-burst the listener answers 429 with a Retry-After. The default never limits a healthy runtime; it keeps one that writes in a loop from filling the queue all runtimes share. Negative disables.")
	fs.IntVar(&o.ListenerRuntimeBurst, "listener-runtime-burst", o.ListenerRuntimeBurst, "Burst of --listener-runtime-rate.")
	fs.StringSliceVar(&o.ListenerManagers, "listener-managers", o.ListenerManagers, "More managers the listener serves, for controllers embedded with the operator that consume their events.")
	fs.BoolVar(&o.AgentInstall, "agent-install", o.AgentInstall, "Install the skr-agent and its certificate into every runtime.")
	fs.StringVar(&o.AgentKCPAddress, "agent-kcp-address", o.AgentKCPAddress, "host[:port] the agents send events to: the Istio gateway, or the listener in direct mode. Required with --agent-install.")
	fs.StringVar(&o.AgentImage, "agent-image", o.AgentImage, "Image of the skr-agent.")
	fs.StringVar(&o.AgentContract, "agent-contract", o.AgentContract, "First path segment of the agents' event URLs.")
	fs.StringVar(&o.AgentWebhookURL, "agent-webhook-url", o.AgentWebhookURL, "Make runtimes call the agent at this URL (https://host:port) instead of its Service: local runs where no pods run.")
	fs.StringSliceVar(&o.AgentWebhookURLHosts, "agent-webhook-url-allowed-hosts", o.AgentWebhookURLHosts, "Hosts (host[:port]; a host without a port means every port) a Kyma's annotation operator.kyma-project.io/agent-webhook-url may point the runtime's webhooks at; empty: the annotation is ignored and the agent called at its Service (or --agent-webhook-url), reported on the SKRWebhook condition and by a Warning Event. The webhooks send AdmissionReviews, Secret bodies included, to that URL.")
	fs.DurationVar(&o.AgentRerenderSpread, "agent-rerender-spread", o.AgentRerenderSpread, "A Watcher change re-renders the agent of every runtime evenly over this window (longer where --fan-out-rate needs it).")
	fs.BoolVar(&o.ModuleDriftWatch, "module-drift-watch", o.ModuleDriftWatch, "Let the agents report edits and deletions of module resources, so that drift is repaired by push.")
	fs.Float64Var(&o.PushRuntimeRate, "push-runtime-rate", o.PushRuntimeRate, "Pushed requests per second per runtime that go before other work in the controllers' queues (a token bucket); beyond it, and --push-runtime-burst, a runtime's requests wait behind everyone else's, as background work does. 0 disables.")
	fs.IntVar(&o.PushRuntimeBurst, "push-runtime-burst", o.PushRuntimeBurst, "Burst of --push-runtime-rate.")
	fs.DurationVar(&o.PushRecheckDelay, "push-recheck-delay", o.PushRecheckDelay, "Reconcile again this long after a pushed event without a pre-write version (the public agent's, creates, deletes), or after a reconcile that could not read past the version an event named: the agent reports a write before the runtime's API server stores it. 0 disables.")
	fs.DurationVar(&o.RequeueNoPush, "requeue-no-push", o.RequeueNoPush, "Resync of a Kyma whose agent is not ready: without the push path, polling is the only way to see changes.")
}

// bindRetries binds the rate limiter of failed reconciles.
func (o *Options) bindRetries(fs *pflag.FlagSet) {
	fs.DurationVar(&o.RateLimiterBaseDelay, "rate-limiter-base-delay", o.RateLimiterBaseDelay, "First retry delay of a failed reconcile (doubles per failure).")
	fs.DurationVar(&o.RateLimiterMaxDelay, "rate-limiter-max-delay", o.RateLimiterMaxDelay, "Largest retry delay of a failed reconcile.")
	fs.Float64Var(&o.RateLimiterQPS, "rate-limiter-qps", o.RateLimiterQPS, "Overall retries per second of each controller (token bucket).")
	fs.IntVar(&o.RateLimiterBurst, "rate-limiter-burst", o.RateLimiterBurst, "Burst of the retry token bucket.")
}

// Validate reports every invalid setting at once.
func (o *Options) Validate() error {
	errs := o.validateDurations()
	counts := map[string]int{
		"--kyma-concurrency": o.KymaConcurrency, "--catalog-concurrency": o.CatalogConcurrency,
		"--manifest-concurrency": o.ManifestConcurrency, "--apply-parallelism": o.ApplyParallelism,
		"--layer-cache-mb": int(o.LayerCacheMB), "--max-layer-mb": int(o.MaxLayerMB), "--render-cache-entries": o.RenderCacheEntries,
		"--render-max-mb": int(o.RenderMaxMB), "--render-max-objects": o.RenderMaxObjects, "--render-concurrency": o.RenderConcurrency,
		"--kcp-burst": o.KCPBurst, "--runtime-burst": o.RuntimeBurst, "--rate-limiter-burst": o.RateLimiterBurst,
	}
	for name, n := range counts {
		if n < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", name, n))
		}
	}
	if o.KCPQPS <= 0 || o.RuntimeQPS <= 0 || o.RateLimiterQPS <= 0 {
		errs = append(errs, errors.New("--kcp-qps, --runtime-qps and --rate-limiter-qps must be positive"))
	}
	if o.RequeueJitter < 0 || o.RequeueJitter > 1 {
		errs = append(errs, fmt.Errorf("--requeue-jitter must be between 0 and 1, got %g", o.RequeueJitter))
	}
	if o.FanOutRate < 0 {
		errs = append(errs, fmt.Errorf("--fan-out-rate must not be negative, got %g", o.FanOutRate))
	}
	if o.FanOutLatencyTarget < 0 {
		errs = append(errs, fmt.Errorf("--fan-out-latency-target must not be negative, got %s", o.FanOutLatencyTarget))
	}
	if o.FanOutRuntimeLatencyTarget < 0 {
		errs = append(errs, fmt.Errorf("--fan-out-runtime-latency-target must not be negative, got %s", o.FanOutRuntimeLatencyTarget))
	}
	if o.RateLimiterMaxDelay < o.RateLimiterBaseDelay {
		errs = append(errs, errors.New("--rate-limiter-max-delay must not be below --rate-limiter-base-delay"))
	}
	if o.ListenerMode != "gateway" && o.ListenerMode != "direct" {
		errs = append(errs, fmt.Errorf("--listener-mode must be gateway or direct, got %q", o.ListenerMode))
	}
	if o.AgentInstall && o.AgentKCPAddress == "" {
		errs = append(errs, errors.New("--agent-kcp-address is required with --agent-install (or pass --agent-install=false)"))
	}
	if o.PushRuntimeRate < 0 || (o.PushRuntimeRate > 0 && o.PushRuntimeBurst < 1) {
		errs = append(errs, fmt.Errorf("--push-runtime-rate %v with --push-runtime-burst %d: want a rate of 0 (off), or more with a burst of at least 1",
			o.PushRuntimeRate, o.PushRuntimeBurst))
	}
	if o.ListenerRuntimeRate == 0 || (o.ListenerRuntimeRate > 0 && o.ListenerRuntimeBurst < 1) {
		errs = append(errs, fmt.Errorf("--listener-runtime-rate %v with --listener-runtime-burst %d: want a positive rate with a burst of at least 1, or a negative rate (no limit)",
			o.ListenerRuntimeRate, o.ListenerRuntimeBurst))
	}
	if _, err := kubeconfig.ParseAllow(o.RuntimeKubeconfigAllow); err != nil {
		errs = append(errs, fmt.Errorf("--runtime-kubeconfig-allow: %w", err))
	}
	if _, err := contentpolicy.Parse(o.ModuleDeniedKinds); err != nil {
		errs = append(errs, fmt.Errorf("--module-denied-kinds: %w", err))
	}
	errs = append(errs, o.validateSignatures()...)
	errs = append(errs, o.Webhook.validate(o.AgentInstall || o.ListenerAddr != "")...)
	errs = append(errs, o.DescriptorRegistry.validate()...)
	if _, err := o.SKRImagePullSecretName(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Replicas.validate()...)
	if len(o.Namespaces) == 0 {
		errs = append(errs, errors.New("--namespaces must name at least one KCP namespace"))
	}
	for flag, hosts := range map[string][]string{"--agent-webhook-url-allowed-hosts": o.AgentWebhookURLHosts, "--insecure-registries": o.InsecureRegistries} {
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, "/@?#* ") {
				errs = append(errs, fmt.Errorf("%s: %q is not host[:port]", flag, h))
			}
		}
	}
	return errors.Join(errs...)
}

// validateDurations checks the intervals and windows.
func (o *Options) validateDurations() []error {
	var errs []error
	positive := map[string]time.Duration{
		"--runtime-timeout": o.RuntimeTimeout, "--runtime-client-idle-ttl": o.RuntimeIdleTTL,
		"--requeue-success": o.RequeueSuccess, "--requeue-busy": o.RequeueBusy, "--requeue-busy-max": o.RequeueBusyMax,
		"--requeue-warning": o.RequeueWarning, "--requeue-error": o.RequeueError,
		"--rate-limiter-base-delay": o.RateLimiterBaseDelay, "--rate-limiter-max-delay": o.RateLimiterMaxDelay,
		"--shutdown-timeout": o.ShutdownTimeout, "--purge-grace-period": o.PurgeGracePeriod,
		"--registry-timeout": o.RegistryTimeout, "--requeue-no-push": o.RequeueNoPush,
		"--render-timeout": o.RenderTimeout,
	}
	for name, d := range positive {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	notNegative := map[string]time.Duration{
		"--template-change-spread": o.TemplateChangeSpread, "--agent-rerender-spread": o.AgentRerenderSpread,
		"--push-recheck-delay": o.PushRecheckDelay,
	}
	for name, d := range notNegative {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %s", name, d))
		}
	}
	return errs
}

// validateSignatures checks the module signature flags.
func (o *Options) validateSignatures() []error {
	var errs []error
	policy, err := signature.ParsePolicy(o.ModuleSignaturePolicy)
	if err != nil {
		errs = append(errs, fmt.Errorf("--module-signature-policy: %w", err))
	}
	if o.ModuleTrustSecret != "" {
		ns, name, ok := strings.Cut(o.ModuleTrustSecret, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			errs = append(errs, fmt.Errorf("--module-trust-secret %q: want namespace/name", o.ModuleTrustSecret))
		}
	} else if policy == signature.PolicyEnforce {
		errs = append(errs, errors.New("--module-signature-policy=enforce needs --module-trust-secret: nothing could verify"))
	}
	return errs
}
