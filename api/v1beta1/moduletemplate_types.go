package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lifecycle-manager/api/v1beta2"
)

// ModuleTemplate is a module in a channel, in the shape of the original
// documentation: with spec.target.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=mt
// +kubebuilder:unservedversion
// +kubebuilder:deprecatedversion:warning="operator.kyma-project.io/v1beta1 ModuleTemplate is deprecated; use v1beta2"
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=".spec.channel"
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=".spec.target"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ModuleTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ModuleTemplateSpec `json:"spec,omitempty"`
}

// ModuleTemplateSpec describes a module in a channel.
type ModuleTemplateSpec struct {
	// Channel the template is registered in.
	// +optional
	// +kubebuilder:validation:Pattern:=`^$|^[a-z]{3,}$`
	// +kubebuilder:validation:MaxLength:=32
	Channel string `json:"channel,omitempty"`

	// Data is the module's default custom resource.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:XEmbeddedResource
	Data *unstructured.Unstructured `json:"data,omitempty"`

	// Descriptor is the module's OCM component descriptor.
	// +kubebuilder:pruning:PreserveUnknownFields
	Descriptor runtime.RawExtension `json:"descriptor"`

	// Target is where the module was meant to run: remote (the runtime) or
	// control-plane (the KCP). This operator installs every module into the
	// runtime; the value is kept as written.
	// +optional
	Target Target `json:"target,omitempty"`

	// CustomStateCheck maps values of the module CR to states.
	// +optional
	CustomStateCheck []*v1beta2.CustomStateCheck `json:"customStateCheck,omitempty"`
}

// Target is where a module runs.
// +kubebuilder:validation:Enum=remote;control-plane
type Target string

// The targets of the original documentation.
const (
	TargetRemote       Target = "remote"
	TargetControlPlane Target = "control-plane"
)

// ModuleTemplateList is a list of ModuleTemplates.
//
// +kubebuilder:object:root=true
type ModuleTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModuleTemplate `json:"items"`
}
