package options

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// Options are the operator's settings.
type Options struct {
	Kubeconfig string
	// UpgradeCRDs runs internal/crdupgrade instead of the operator.
	UpgradeCRDs bool
	MetricsAddr string
	HealthAddr  string
	// LeaderElect follows the lease: a lease of 0 runs without election.
	LeaderElect bool
	// Shard names the part of the fleet this instance reconciles
	// (internal/shard); empty: every Kyma.
	Shard           string
	Namespaces      []string
	ShutdownTimeout time.Duration
	// Gates are the feature gates (--feature-gates, gates.go).
	Gates Gates

	RuntimeTimeout time.Duration
	RuntimeIdleTTL time.Duration
	// RuntimeKubeconfigAllow are the kubeconfig features beyond inline
	// credentials that runtime kubeconfigs may use (internal/kubeconfig).
	RuntimeKubeconfigAllow []string

	KymaConcurrency     int
	ManifestConcurrency int

	LayerCacheDir      string
	InsecureRegistries []string
	// ModuleDeniedKinds is the content refused before apply
	// (internal/contentpolicy), from which ModulePrivileged are partly exempt.
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

	// FanOutRate caps the Kymas per second each controller re-enqueues
	// after a template, release meta or Watcher change (internal/schedule).
	FanOutRate float64
	// FanOutLatencyTarget is the KCP write latency beyond which the
	// fan-outs slow down (internal/schedule); 0 keeps FanOutRate fixed.
	FanOutLatencyTarget time.Duration
	PurgeGracePeriod    time.Duration
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

	ListenerAddr           string
	ListenerMode           string
	ListenerTrustedProxies []string
	ListenerManagers       []string
	ListenerRuntimeRate    float64
	ListenerRuntimeBurst   int
	// AgentKCPAddress set installs the agent (AgentInstall).
	AgentKCPAddress      string
	AgentImage           string
	AgentWebhookURL      string
	AgentWebhookURLHosts []string
	RequeueNoPush        time.Duration
	PushRecheckDelay     time.Duration

	RateLimiterMaxDelay time.Duration

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
	o := Options{
		MetricsAddr:     ":8080",
		Webhook:         defaultWebhook(),
		Replicas:        defaultReplicas(),
		HealthAddr:      ":8081",
		Namespaces:      []string{"kcp-system"},
		ShutdownTimeout: 30 * time.Second,
		Gates:           defaultGates(),
		AdoptFrom:       PublicLifecycleManager(),

		RuntimeTimeout: 30 * time.Second,

		KymaConcurrency: 8,

		LayerCacheDir:     filepath.Join(os.TempDir(), "lifecycle-manager", "layers"),
		ModuleDeniedKinds: contentpolicy.Defaults(),
		// warn, not enforce: an upgrade must not refuse every unsigned
		// module; and without --module-trust-secret nothing is checked.
		ModuleSignaturePolicy: string(signature.PolicyWarn),

		RequeueSuccess: 2 * time.Hour,
		RequeueBusy:    5 * time.Second,
		RequeueError:   time.Minute,

		FanOutRate:          5,
		FanOutLatencyTarget: 100 * time.Millisecond,
		PurgeGracePeriod:    5 * time.Minute,
		ProtectedNamespaces: []string{"default", "kube-system", "kube-public", "kube-node-lease", "kyma-system"},

		GatewayName: "lifecycle-manager-events",

		ListenerAddr:           ":8082",
		ListenerMode:           "gateway",
		ListenerTrustedProxies: []string{"127.0.0.0/8", "::1/128"},
		ListenerRuntimeRate:    100,
		ListenerRuntimeBurst:   1000,
		AgentImage:             "ghcr.io/lifecycle-manager/skr-agent:latest",
		PushRecheckDelay:       500 * time.Millisecond,
	}
	o.follow()
	return o
}

// Bind registers the flags on fs with o's current values as defaults,
// each annotated with its group (GroupAnnotation). Settings without a
// flag keep their Default (docs/design/settings.md says why each is a
// constant); some follow a flag (derived.go).
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
		{"Manager, replicas and clients", o.bindManager},
		{"Modules and registries", o.bindModules},
		{"Descriptors in the registry", o.DescriptorRegistry.bind},
		{"Requeue, fan-out and maintenance windows", o.bindRequeue},
		{"Removal and purge", o.bindRemoval},
		{"Push path and Watchers", o.bindPush},
		{"Conversion webhook (v1beta1)", o.Webhook.bind},
	}
}

// bindManager binds the flags of the manager, its replicas and its clients.
func (o *Options) bindManager(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the KCP; empty means KUBECONFIG, then the in-cluster config.")
	fs.BoolVar(&o.UpgradeCRDs, "upgrade-crds", o.UpgradeCRDs, "Apply this operator's CRDs to the KCP and exit, first moving objects stored in versions other than the storage version (v1beta1 of the public lifecycle manager) to it; with --webhook-service they serve v1beta1 through the conversion webhook. The chart runs it as a pre-install and pre-upgrade hook.")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, "Address of the Prometheus metrics endpoint (and of /debug/pprof with the Profiling feature gate); 0 disables it.")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "Address of the /healthz and /readyz endpoints.")
	o.Replicas.bind(fs)
	derive(fs, "leader-election-lease-duration", o.follow)
	fs.StringVar(&o.Shard, "shard", o.Shard, "Shard of the fleet this instance reconciles: only Kymas labelled "+shared.ShardLabel+"=<shard>, whose Manifests and Secrets alone its caches hold; Kymas without the label get one from the first shard of the ConfigMap "+ShardsConfigMap+" (key shards: the shard names, comma-separated). Needs leader election (Lease lifecycle-manager-<shard>.operator.kyma-project.io). Empty: every Kyma. See docs/sharding.md.")
	fs.StringSliceVar(&o.Namespaces, "namespaces", o.Namespaces, "KCP namespaces the operator watches (Kymas, templates, Secrets); the cache holds nothing else.")
	fs.StringSliceVar(&o.RuntimeKubeconfigAllow, "runtime-kubeconfig-allow", o.RuntimeKubeconfigAllow, "Kubeconfig features runtime Secrets may use beyond inline credentials (token, client certificate and key, CA data): exec, files, proxy-url, insecure-skip-tls-verify, basic-auth, impersonation. Each lets whoever writes a runtime Secret make the operator do more (docs/security.md, Runtime kubeconfigs); unknown values stop the operator at start.")
	fs.IntVar(&o.KymaConcurrency, "kyma-concurrency", o.KymaConcurrency, "Kymas reconciled in parallel; twice as many Manifests (module installations) are.")
	derive(fs, "kyma-concurrency", o.follow)
	o.Gates.bind(fs)
}

// bindModules binds the flags of module installation and registries.
func (o *Options) bindModules(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.InsecureRegistries, "insecure-registries", o.InsecureRegistries, "Registries (host[:port]; a host without a port means every port) reached over plain HTTP. No other registry is, loopback and private addresses included, and no request, redirect or token realm goes to a plain-HTTP address not listed: module descriptors name the registries.")
	fs.StringSliceVar(&o.TemplateNamespaces, "template-namespaces", o.TemplateNamespaces, "Namespaces besides the Kyma's own that a namespace/name module reference may name a ModuleTemplate in; empty: only the Kyma's own. A reference to another namespace is Error on the module, with the reason.")
	fs.StringVar(&o.ModuleSignaturePolicy, "module-signature-policy", o.ModuleSignaturePolicy, "What happens to a module whose ModuleTemplate is unsigned or whose signature does not verify against --module-trust-secret: off (nothing is checked), warn (installed; a Warning Event and the Kyma's ModuleSignatures condition say why) or enforce (refused: the module is Error and nothing of it is applied). Without --module-trust-secret nothing is checked. A Kyma labelled operator.kyma-project.io/module-signature-policy may raise it for itself.")
	fs.StringVar(&o.ModuleTrustSecret, "module-trust-secret", o.ModuleTrustSecret, "Secret (namespace/name) whose keys hold the trust anchors of module signatures as PEM: PUBLIC KEY blocks (ECDSA or Ed25519) and CA CERTIFICATE blocks; read again within 10s of a change.")
	fs.StringVar(&o.SKRImagePullSecret, "skr-image-pull-secret", o.SKRImagePullSecret, "Image pull Secret (name in the first watched namespace, or namespace/name) copied into every runtime's namespace under its name, kept equal to the KCP's, and named in the imagePullSecrets (and env SKR_IMG_PULL_SECRET) of module Deployments and StatefulSets and of the agent; a change reaches every runtime at the fan-out pace, and the Kyma condition SKRImagePullSecretSync reports the copy. Same name and meaning as in the public lifecycle manager.")
	fs.StringSliceVar(&o.ModuleDeniedKinds, "module-denied-kinds", o.ModuleDeniedKinds, "Rendered objects a module may not apply, as [GROUP/]KIND[:CONDITION] with CONDITION always (default), cluster-admin (a binding to the ClusterRole cluster-admin), foreign (a webhook configuration not named for the module, or calling a URL), wildcard (a ClusterRole or Role granting every verb in every group or on every resource of a group not the module's, or aggregating others; a binding of such a role) or broad (a webhook configuration matching every resource of a group not the module's, or Secrets); \"\" denies nothing. The module's default CR is judged likewise. See docs/modules.md, What a module may render.")
	fs.StringSliceVar(&o.ModulePrivileged, "module-privileged", o.ModulePrivileged, "Modules exempt from the wildcard and broad conditions of --module-denied-kinds (and from no other rule): modules trusted with cluster-wide power, e.g. whose manager needs every verb on every resource, or whose webhook sees every Secret.")
}

// bindRequeue binds the flags of requeue intervals, fan-out pacing and maintenance windows.
func (o *Options) bindRequeue(fs *pflag.FlagSet) {
	fs.DurationVar(&o.RequeueSuccess, "requeue-success", o.RequeueSuccess, "Resync of a Ready Kyma and its Manifests (jittered); the push path brings changes sooner. A Kyma whose agent is not ready resyncs every minute (or at this interval when shorter): without the push path, polling is the only way to see changes.")
	derive(fs, "requeue-success", o.follow)
	fs.DurationVar(&o.RequeueBusy, "requeue-busy", o.RequeueBusy, "First recheck of a Manifest while its module is installed or deleted, and of a Kyma being deleted (a Processing Kyma waits for news instead); each later recheck waits half the time its status has been unchanged, up to 12 times this.")
	derive(fs, "requeue-busy", o.follow)
	fs.DurationVar(&o.RequeueError, "requeue-error", o.RequeueError, "Requeue of a Kyma in Error; a Kyma in Warning waits twice as long, and a failing reconcile backs off from 500ms up to 5 times this.")
	derive(fs, "requeue-error", o.follow)
	fs.Float64Var(&o.FanOutRate, "fan-out-rate", o.FanOutRate, "Kymas per second, at most, that each controller re-enqueues after ModuleTemplate, ModuleReleaseMeta, Watcher or pull Secret changes, one change after another: a release to 10,000 runtimes at 5/s takes 33 minutes and leaves the API servers room for pushed changes. While most of the operator's writes are slow (KCP over 100ms, runtimes over 250ms) the pace drops to as little as 1/32 of this. 0: no limit.")
	fs.StringVar(&o.MaintenancePolicy, "maintenance-policy", o.MaintenancePolicy, "Maintenance policy file (YAML or JSON, read again when it changes, e.g. a mounted ConfigMap): upgrades to a module version that requires downtime wait for the runtime's window unless the Kyma skips windows. Empty: such upgrades run at once (the log says so at startup). See docs/operating.md, Maintenance windows.")
}

// bindRemoval binds the flags of what modules may delete.
func (o *Options) bindRemoval(fs *pflag.FlagSet) {
	fs.DurationVar(&o.PurgeGracePeriod, "purge-grace-period", o.PurgeGracePeriod, "A Kyma still being deleted after this long is purged.")
	fs.StringSliceVar(&o.ProtectedNamespaces, "protected-namespaces", o.ProtectedNamespaces, "Namespaces no module deletes, even one it created (prune, removal and purge); a runtime's sync namespace is always protected.")
}

// bindPush binds the flags of the push path: listener, agents and the
// Istio Gateway of the Watchers.
func (o *Options) bindPush(fs *pflag.FlagSet) {
	fs.StringVar(&o.ListenerAddr, "listener-bind-address", o.ListenerAddr, "Address of the event listener that the agents push to; empty disables the push path.")
	fs.StringVar(&o.ListenerMode, "listener-mode", o.ListenerMode, "gateway: an Istio gateway terminates mTLS and passes the client certificate in X-Forwarded-Client-Cert, and the Watcher controller keeps its VirtualServices (the Istio CRDs must be in the KCP); direct: the listener terminates mTLS itself with the endpoint certificate, and Watchers need no route.")
	derive(fs, "listener-mode", o.follow)
	fs.StringSliceVar(&o.ListenerTrustedProxies, "listener-trusted-proxies", o.ListenerTrustedProxies, "CIDRs whose X-Forwarded-Client-Cert the listener believes (gateway mode): the ingress gateway pods' addresses.")
	fs.StringVar(&o.GatewayName, "istio-gateway-name", o.GatewayName, "Istio Gateway of the event endpoint that the operator keeps in the first watched namespace (hosts: --cert-endpoint-dns-names, or every host; TLS: the endpoint certificate); empty leaves the Gateway to someone else.")
	fs.StringVar(&o.AgentKCPAddress, "agent-kcp-address", o.AgentKCPAddress, "host[:port] the agents send events to: the Istio gateway, or the listener in direct mode. Set, the operator installs the skr-agent and its certificate into every runtime; empty, it installs no agent.")
	fs.StringVar(&o.AgentImage, "agent-image", o.AgentImage, "Image of the skr-agent.")
	fs.StringSliceVar(&o.AgentWebhookURLHosts, "agent-webhook-url-allowed-hosts", o.AgentWebhookURLHosts, "Hosts (host[:port]; a host without a port means every port) a Kyma's annotation operator.kyma-project.io/agent-webhook-url may point the runtime's webhooks at; empty: the annotation is ignored and the agent called at its Service, reported on the SKRWebhook condition and by a Warning Event. The webhooks send AdmissionReviews, Secret bodies included, to that URL.")
}

// Validate reports every invalid flag at once.
func (o *Options) Validate() error {
	var errs []error
	positive := map[string]time.Duration{
		"--requeue-success": o.RequeueSuccess, "--requeue-busy": o.RequeueBusy, "--requeue-error": o.RequeueError,
		"--purge-grace-period": o.PurgeGracePeriod,
	}
	for name, d := range positive {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	if o.KymaConcurrency < 1 {
		errs = append(errs, fmt.Errorf("--kyma-concurrency must be at least 1, got %d", o.KymaConcurrency))
	}
	if o.FanOutRate < 0 {
		errs = append(errs, fmt.Errorf("--fan-out-rate must not be negative, got %g", o.FanOutRate))
	}
	if o.ListenerMode != ListenerModeGateway && o.ListenerMode != ListenerModeDirect {
		errs = append(errs, fmt.Errorf("--listener-mode must be gateway or direct, got %q", o.ListenerMode))
	}
	if _, err := kubeconfig.ParseAllow(o.RuntimeKubeconfigAllow); err != nil {
		errs = append(errs, fmt.Errorf("--runtime-kubeconfig-allow: %w", err))
	}
	if _, err := contentpolicy.Parse(o.ModuleDeniedKinds); err != nil {
		errs = append(errs, fmt.Errorf("--module-denied-kinds: %w", err))
	}
	errs = append(errs, o.validateSignatures()...)
	errs = append(errs, o.Webhook.validate(o.AgentInstall() || o.ListenerAddr != "")...)
	errs = append(errs, o.DescriptorRegistry.validate()...)
	if _, err := o.SKRImagePullSecretName(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Replicas.validate()...)
	errs = append(errs, o.validateShard()...)
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

// maxShardName keeps the shard's Lease name and the chart's per-shard
// object names within Kubernetes' limits.
const maxShardName = 40

func (o *Options) validateShard() []error {
	if o.Shard == "" {
		return nil
	}
	var errs []error
	if msgs := validation.IsDNS1123Label(o.Shard); len(msgs) > 0 || len(o.Shard) > maxShardName {
		errs = append(errs, fmt.Errorf("--shard %q: want a DNS label of at most %d characters", o.Shard, maxShardName))
	}
	if !o.LeaderElect {
		errs = append(errs, errors.New("--shard needs leader election (--leader-election-lease-duration > 0): the shard's Lease tells other shards whether it may still write"))
	}
	return errs
}
