package shared

// The label and annotation keys of the lifecycle manager. They are part of the
// compatibility contract with the public Kyma lifecycle-manager: runtimes,
// module operators and tooling already rely on these exact strings.
const (
	// OperatorGroup is the API group and the prefix of every key below.
	OperatorGroup = "operator.kyma-project.io"

	// KymaNameLabel names the Kyma an object belongs to, e.g. the Secret with
	// the runtime's kubeconfig or a Manifest.
	KymaNameLabel = OperatorGroup + "/kyma-name"
	// RuntimeIDLabel carries the runtime ID of a Kyma; it is the CN of the
	// runtime's client certificate.
	RuntimeIDLabel = "kyma-project.io/runtime-id"
	// RegionLabel, PlatformRegionLabel, PlanLabel and GlobalAccountIDLabel
	// describe a Kyma's runtime as its provisioner labels it; maintenance
	// policies select runtimes by them.
	RegionLabel          = "kyma-project.io/region"
	PlatformRegionLabel  = "kyma-project.io/platform-region"
	PlanLabel            = "kyma-project.io/broker-plan-name"
	GlobalAccountIDLabel = "kyma-project.io/global-account-id"
	// SubAccountIDLabel carries the BTP subaccount of a Kyma's runtime; it
	// and GlobalAccountIDLabel are copied to the runtime Kyma.
	SubAccountIDLabel = "kyma-project.io/subaccount-id"
	// ModuleNameLabel names the module a template, release meta or Manifest belongs to.
	ModuleNameLabel = OperatorGroup + "/module-name"
	// ChannelLabel names the channel a Manifest was resolved from.
	ChannelLabel = OperatorGroup + "/channel"
	// ManagedByLabel names the controller that manages an object.
	ManagedByLabel = OperatorGroup + "/managed-by"
	// SkipReconciliationLabel set to "true" stops all reconciliation of a Kyma or Manifest.
	SkipReconciliationLabel = OperatorGroup + "/skip-reconciliation"
	// InternalLabel set to "true" marks internal modules, and Kymas allowed to use them.
	InternalLabel = OperatorGroup + "/internal"
	// BetaLabel set to "true" marks beta modules, and Kymas allowed to use them.
	BetaLabel = OperatorGroup + "/beta"
	// MandatoryModuleLabel marks Manifests of mandatory modules.
	MandatoryModuleLabel = OperatorGroup + "/mandatory-module"
	// WatchedByLabel names the manager that wants change events for an object.
	WatchedByLabel = OperatorGroup + "/watched-by"
	// PurposeLabel says what a Secret is for, e.g. certificate management.
	PurposeLabel = OperatorGroup + "/purpose"
	// SignatureLabel names the signature that verifies a module's descriptor.
	SignatureLabel = OperatorGroup + "/signature"
	// SignaturePolicyLabel on a KCP Kyma ("warn" or "enforce") raises the
	// operator's module signature policy for that Kyma; it never lowers it.
	SignaturePolicyLabel = OperatorGroup + "/module-signature-policy"
	// SyncLabel set to "false" on a ModuleTemplate keeps it out of the runtime catalog.
	SyncLabel = OperatorGroup + "/sync"
	// WatcherGatewayLabel marks the Istio Gateway of the event endpoint;
	// Watchers select it by this label (value "default").
	WatcherGatewayLabel = OperatorGroup + "/watcher-gateway"
	// OCIRegistryCredLabel on a ModuleTemplate names the registry pull
	// Secrets of its layers: Secrets in the KCP labelled with the same key
	// and value.
	OCIRegistryCredLabel = OperatorGroup + "/oci-registry-cred"
	// ManifestLabel on a module's object in a runtime carries the UID of the
	// Manifest whose apply placed it first. Deletion finds by it, across the
	// whole runtime, what no status recorded (a first install that stopped
	// part way): the module-name label alone would also match the same
	// module of another Kyma that shares the API server.
	ManifestLabel = OperatorGroup + "/manifest"
	// ControllerNameLabel selects the controller for a module's Manifest.
	ControllerNameLabel = OperatorGroup + "/controller-name"
	// ShardLabel on a Kyma names the operator shard (--shard) that
	// reconciles it; its Manifests and Secrets carry the same value, so that
	// each shard's caches hold only its part of the fleet.
	ShardLabel = OperatorGroup + "/shard"

	// SyncNamespaceAnnotation overrides the runtime-side namespace of a Kyma
	// (kyma-system by default).
	SyncNamespaceAnnotation = OperatorGroup + "/sync-namespace"
	// FQDNAnnotation carries a module's OCM component name.
	FQDNAnnotation = OperatorGroup + "/fqdn"
	// SKRDomainAnnotation carries the runtime's domain, used for certificate DNS names.
	SKRDomainAnnotation = "skr-domain"
	// CAAddedAtAnnotation records when a CA entered the trust bundle.
	CAAddedAtAnnotation = OperatorGroup + "/ca-added-at"
	// AgentWebhookURLAnnotation on a Kyma makes its runtime call the agent at
	// this URL (https://host:port) instead of the agent's Service, for local
	// runs with several runtimes; followed only to the hosts of
	// --agent-webhook-url-allowed-hosts.
	AgentWebhookURLAnnotation = OperatorGroup + "/agent-webhook-url"
	// RotateCAAnnotation on the trust bundle Secret asks for a CA rotation
	// now (e.g. after a key leaked): any new value starts one;
	// CARotatedForAnnotation records the value handled last.
	RotateCAAnnotation     = OperatorGroup + "/rotate-ca"
	CARotatedForAnnotation = OperatorGroup + "/ca-rotated-for"
	// UnmanagedAnnotation set to "true" on a Manifest releases its module:
	// deleting the Manifest then leaves the module's resources in place.
	UnmanagedAnnotation = OperatorGroup + "/is-unmanaged"
	// LastSyncedSpecAnnotation holds the hash of the modules and channel that
	// the KCP Kyma and its runtime Kyma last agreed on, so that the operator
	// knows which side changed since.
	LastSyncedSpecAnnotation = OperatorGroup + "/last-synced-spec"
	// AppliedAnnotation on a Manifest is where operators before
	// status.applied recorded what they last applied to the runtime; it is
	// read when status.applied is empty, so that an upgrade of the operator
	// does not re-apply every module.
	AppliedAnnotation = OperatorGroup + "/applied"
	// ShardOwnerAnnotation on a Kyma names the shard that claimed it and
	// may still be writing its objects; a shard takes over a Kyma only once
	// the owner has let go of it or holds its Lease no longer.
	ShardOwnerAnnotation = OperatorGroup + "/shard-owner"
	// ShardAssignedAnnotation records the shard the coordinator assigned a
	// Kyma to; a shard label that differs from it was set by hand and pins
	// the Kyma.
	ShardAssignedAnnotation = OperatorGroup + "/shard-assigned"
	// SpecHashAnnotation holds the hash of what the operator last applied to
	// an object, so that unchanged objects cost no write.
	SpecHashAnnotation = OperatorGroup + "/spec-hash"
)

// Values of the keys above.
const (
	// OperatorName is the value of ManagedByLabel on objects of this operator.
	OperatorName = "lifecycle-manager"
	// KymaFinalizer guards Kymas until their runtime side is cleaned up.
	KymaFinalizer = OperatorGroup + "/Kyma"
	// ManifestFinalizer guards Manifests until their module is removed.
	ManifestFinalizer = OperatorGroup + "/Manifest"
	// AllowDowngradeAnnotation on a Kyma ("true") lets its modules move to
	// a version lower than the installed one; without it that is refused.
	AllowDowngradeAnnotation = OperatorGroup + "/allow-downgrade"
	// PublicManifestFinalizer is the finalizer the public lifecycle manager
	// puts on its Manifests; a KCP switched to this operator takes them over.
	PublicManifestFinalizer = "declarative.kyma-project.io/finalizer"
	// PublicManagedByValue is the ManagedByLabel value of what the public
	// lifecycle manager writes in runtimes: module objects, its agent, the
	// runtime catalog.
	PublicManagedByValue = "kyma"
	// PublicLabelRemovalFinalizer and PublicDefaultCRFinalizer are the
	// public lifecycle manager's other finalizers of a Manifest.
	PublicLabelRemovalFinalizer = "label-removal-finalizer"
	PublicDefaultCRFinalizer    = "resource.kyma-project.io/finalizer"
	// WatcherFinalizer guards Watchers until their VirtualService is removed.
	WatcherFinalizer = OperatorGroup + "/watcher"
	// PurgeFinalizer guards Kymas until the Purge controller is done with them.
	PurgeFinalizer = OperatorGroup + "/purge-finalizer"

	// WatcherGatewayDefault is the WatcherGatewayLabel value of the default Gateway.
	WatcherGatewayDefault = "default"
	// WatchedByKymaValue is the WatchedByLabel value of runtime Kymas: the
	// default Watcher sends their changes to the lifecycle manager.
	WatchedByKymaValue = "kyma"

	// DefaultRuntimeKymaName is the name of the Kyma inside a runtime.
	DefaultRuntimeKymaName = "default"
	// DefaultRuntimeNamespace is the runtime-side namespace of the operator.
	DefaultRuntimeNamespace = "kyma-system"
	// DefaultChannel is used when neither the module nor the Kyma names one.
	DefaultChannel = "regular"
	// KubeconfigSecretKey is the key of the kubeconfig in a runtime's access Secret.
	KubeconfigSecretKey = "config"

	// EnabledValue is the value that switches a boolean label on.
	EnabledValue = "true"
)

// IsEnabled reports whether labels[key] switches the feature on. Label values
// are compared case-insensitively, as users write "True" as often as "true".
func IsEnabled(labels map[string]string, key string) bool {
	v, ok := labels[key]
	if !ok || len(v) != len(EnabledValue) {
		return false
	}
	for i := range len(v) {
		if v[i]|0x20 != EnabledValue[i] {
			return false
		}
	}
	return true
}
