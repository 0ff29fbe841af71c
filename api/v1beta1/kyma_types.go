package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Kyma declares the modules of one runtime cluster, in the shape of the
// original documentation: with spec.sync.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kyma
// +kubebuilder:unservedversion
// +kubebuilder:deprecatedversion:warning="operator.kyma-project.io/v1beta1 Kyma is deprecated; use v1beta2 (spec.sync.namespace is the operator.kyma-project.io/sync-namespace annotation there)"
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=".spec.channel"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Kyma struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KymaSpec `json:"spec,omitempty"`
	// Status is the same in both versions.
	Status v1beta2.KymaStatus `json:"status,omitempty"`
}

// KymaSpec is the desired set of modules of a runtime and how the runtime
// is synchronized.
type KymaSpec struct {
	// Channel is the default release channel of the modules of this Kyma;
	// "regular" when empty.
	// +optional
	// +kubebuilder:validation:Pattern:=`^[a-z]+$`
	// +kubebuilder:validation:MinLength:=3
	// +kubebuilder:validation:MaxLength:=32
	Channel string `json:"channel,omitempty"`

	// Modules are the modules to install into the runtime.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems:=256
	Modules []Module `json:"modules,omitempty"`

	// Sync says how the Kyma reaches its runtime. Only Namespace changes
	// what this operator does; the other settings are kept as written.
	// +optional
	Sync *Sync `json:"sync,omitempty"`
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
	CustomResourcePolicy v1beta2.CustomResourcePolicy `json:"customResourcePolicy,omitempty"`
}

// Sync holds the synchronization settings of the original documentation.
type Sync struct {
	// Enabled synchronizes the Kyma into its runtime. This operator always
	// does; the value is kept as written.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Strategy says where the runtime's kubeconfig comes from: a Secret
	// labelled operator.kyma-project.io/kyma-name=<kyma>, key config.
	// +optional
	// +kubebuilder:default:=secret
	Strategy SyncStrategy `json:"strategy,omitempty"`

	// Namespace is the runtime-side namespace of the Kyma; kyma-system when
	// empty. In v1beta2 it is the operator.kyma-project.io/sync-namespace
	// annotation.
	// +optional
	// +kubebuilder:validation:MaxLength:=63
	// +kubebuilder:validation:Pattern:=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`

	// ModuleCatalog synchronizes the ModuleTemplates into the runtime. This
	// operator always does (a template opts out with the
	// operator.kyma-project.io/sync=false label); kept as written.
	// +optional
	// +kubebuilder:default:=true
	ModuleCatalog *bool `json:"moduleCatalog,omitempty"`

	// NoModuleCopy starts the runtime Kyma without the KCP Kyma's modules.
	// This operator keeps the modules equal on both sides; kept as written.
	// +optional
	// +kubebuilder:default:=true
	NoModuleCopy *bool `json:"noModuleCopy,omitempty"`
}

// SyncStrategy says where a runtime's kubeconfig comes from.
// +kubebuilder:validation:Enum=secret;local-secret
type SyncStrategy string

// The strategies: both read the kubeconfig Secret labelled with the Kyma's
// name, which is what this operator does.
const (
	SyncStrategySecret      SyncStrategy = "secret"
	SyncStrategyLocalSecret SyncStrategy = "local-secret"
)

// KymaList is a list of Kymas.
//
// +kubebuilder:object:root=true
type KymaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Kyma `json:"items"`
}
