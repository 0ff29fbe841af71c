package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
)

// Kyma declares the modules of one runtime cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kyma
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=".spec.channel"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Kyma struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KymaSpec   `json:"spec,omitempty"`
	Status KymaStatus `json:"status,omitempty"`
}

// KymaSpec is the desired set of modules of a runtime.
type KymaSpec struct {
	// Channel is the default release channel of the modules of this Kyma;
	// "regular" when empty.
	// +optional
	// +kubebuilder:validation:Pattern:=`^[a-z]+$`
	// +kubebuilder:validation:MinLength:=3
	// +kubebuilder:validation:MaxLength:=32
	Channel string `json:"channel,omitempty"`

	// SkipMaintenanceWindows applies upgrades that need downtime at once,
	// instead of in the runtime's maintenance window.
	// +optional
	SkipMaintenanceWindows bool `json:"skipMaintenanceWindows,omitempty"`

	// Modules are the modules to install into the runtime.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems:=256
	Modules []Module `json:"modules,omitempty"`
}

// Module is one module of a Kyma.
type Module struct {
	// Name is the module's name; also accepted: a ModuleTemplate's name or
	// namespace/name, or the module's OCM component name.
	// +kubebuilder:validation:MinLength:=1
	// +kubebuilder:validation:MaxLength:=253
	Name string `json:"name"`

	// ControllerName selects the controller that reconciles this module's Manifest.
	// +optional
	ControllerName string `json:"controller,omitempty"`

	// Channel overrides the Kyma's channel for this module.
	// +optional
	// +kubebuilder:validation:Pattern:=`^[a-z]+$`
	// +kubebuilder:validation:MinLength:=3
	// +kubebuilder:validation:MaxLength:=32
	Channel string `json:"channel,omitempty"`

	// CustomResourcePolicy says whether the module's default CR is created
	// and deleted with the module.
	// +optional
	// +kubebuilder:default:=CreateAndDelete
	CustomResourcePolicy CustomResourcePolicy `json:"customResourcePolicy,omitempty"`

	// Managed false releases the module: its Manifest goes and its resources
	// stay. A pointer, so that Go clients that leave it out get the default
	// (true) as YAML users do.
	// +optional
	// +kubebuilder:default:=true
	Managed *bool `json:"managed,omitempty"`

	// RemoteModuleTemplateRef is accepted for compatibility with the public
	// lifecycle manager's API, where it is deprecated and has no effect;
	// this operator ignores it too.
	//
	// Deprecated: ignored; will go with the next API version.
	// +optional
	// +kubebuilder:validation:MaxLength:=253
	RemoteModuleTemplateRef string `json:"remoteModuleTemplateRef,omitempty"`
}

// IsManaged reports whether the operator manages the module (the default).
func (m Module) IsManaged() bool { return m.Managed == nil || *m.Managed }

// CustomResourcePolicy says who owns a module's default custom resource.
// +kubebuilder:validation:Enum=CreateAndDelete;Ignore
type CustomResourcePolicy string

const (
	// CustomResourcePolicyCreateAndDelete creates the default CR with the module and deletes it with it.
	CustomResourcePolicyCreateAndDelete CustomResourcePolicy = "CreateAndDelete"
	// CustomResourcePolicyIgnore leaves the module's CR to the user.
	CustomResourcePolicyIgnore CustomResourcePolicy = "Ignore"
)

// KymaStatus is what the operator observed of a Kyma.
type KymaStatus struct {
	// State is the worst of the module states and conditions.
	// +optional
	State shared.State `json:"state,omitempty"`

	// Conditions: Modules, ModuleCatalog and SKRWebhook.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Modules is the state of every module listed in the spec.
	// +optional
	Modules []ModuleStatus `json:"modules,omitempty"`

	// ActiveChannel is the channel the Kyma was last reconciled with.
	// +optional
	ActiveChannel string `json:"activeChannel,omitempty"`

	// LastOperation is the last thing the operator did with this Kyma.
	// +optional
	LastOperation shared.LastOperation `json:"lastOperation,omitempty"`
}

// ModuleStatus is the state of one module of a Kyma.
type ModuleStatus struct {
	// Name is the module name as written in the spec.
	Name string `json:"name"`
	// FQDN is the module's OCM component name; kept for clients that read the old field.
	// +optional
	FQDN string `json:"fqdn,omitempty"`
	// OCMComponentName is the module's OCM component name.
	// +optional
	OCMComponentName string `json:"ocmComponentName,omitempty"`
	// Channel the module was resolved from.
	// +optional
	Channel string `json:"channel,omitempty"`
	// Version the module was resolved to.
	// +optional
	Version string `json:"version,omitempty"`
	// Message explains the state.
	// +optional
	Message string `json:"message,omitempty"`
	// State of the module.
	State shared.State `json:"state"`
	// Manifest that installs the module.
	// +optional
	Manifest *TrackingObject `json:"manifest,omitempty"`
	// Resource is the module's default custom resource.
	// +optional
	Resource *TrackingObject `json:"resource,omitempty"`
	// Template the module was resolved from.
	// +optional
	Template *TrackingObject `json:"template,omitempty"`
	// Maintenance is true while an upgrade of the module waits for the Kyma's maintenance window.
	// +optional
	Maintenance bool `json:"maintenance,omitempty"`
}

// TrackingObject points at an object and the generation that was seen of it.
type TrackingObject struct {
	metav1.TypeMeta `json:",inline"`
	PartialMeta     `json:"metadata,omitempty"`
}

// PartialMeta is the part of ObjectMeta needed to track an object.
type PartialMeta struct {
	// Name of the object.
	Name string `json:"name"`
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace"`
	// Generation that was observed.
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// Condition types of a Kyma.
const (
	ConditionModules       = "Modules"
	ConditionModuleCatalog = "ModuleCatalog"
	ConditionSKRWebhook    = "SKRWebhook"
	// ConditionRuntime says whether the runtime API server is reachable.
	ConditionRuntime = "Runtime"
)

// KymaList is a list of Kymas.
//
// +kubebuilder:object:root=true
type KymaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kyma `json:"items"`
}

// SkipsReconciliation reports whether the skip-reconciliation label stops all work on k.
func (k *Kyma) SkipsReconciliation() bool {
	return shared.IsEnabled(k.Labels, shared.SkipReconciliationLabel)
}

// IsBeta reports whether k may use beta modules.
func (k *Kyma) IsBeta() bool { return shared.IsEnabled(k.Labels, shared.BetaLabel) }

// IsInternal reports whether k may use internal modules.
func (k *Kyma) IsInternal() bool { return shared.IsEnabled(k.Labels, shared.InternalLabel) }

// RuntimeID returns the runtime ID label of k.
func (k *Kyma) RuntimeID() string { return k.Labels[shared.RuntimeIDLabel] }

// EffectiveChannel is the channel a module resolves in: the module's own,
// else the Kyma's, else the default channel.
func (k *Kyma) EffectiveChannel(m Module) string {
	switch {
	case m.Channel != "":
		return m.Channel
	case k.Spec.Channel != "":
		return k.Spec.Channel
	default:
		return shared.DefaultChannel
	}
}
