package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lifecycle-manager/api/shared"
)

// ModuleTemplate is one version of a module: its OCM component descriptor,
// its default custom resource and what identifies its manager.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=mt
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Module",type=string,JSONPath=".spec.moduleName"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".spec.version"
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=".spec.channel",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ModuleTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ModuleTemplateSpec `json:"spec,omitempty"`
}

// ModuleTemplateSpec describes one module version.
type ModuleTemplateSpec struct {
	// Channel assigns the template to a channel directly. This is the older
	// way, still honoured for resolution; new modules use a ModuleReleaseMeta.
	// +optional
	// +kubebuilder:validation:Pattern:=`^$|^[a-z]{3,}$`
	// +kubebuilder:validation:MaxLength:=32
	Channel string `json:"channel,omitempty"`

	// Version of the module, a semantic version.
	// +optional
	// +kubebuilder:validation:Pattern:=`^((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?)?$`
	// +kubebuilder:validation:MaxLength:=64
	Version string `json:"version,omitempty"`

	// ModuleName is the name users write in a Kyma.
	// +optional
	// +kubebuilder:validation:Pattern:=`^([a-z]{3,}(-[a-z]{3,})*)?$`
	// +kubebuilder:validation:MaxLength:=64
	ModuleName string `json:"moduleName,omitempty"`

	// Mandatory modules are installed into every runtime.
	// +optional
	Mandatory bool `json:"mandatory,omitempty"`

	// Data is the module's default custom resource.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:XEmbeddedResource
	Data *unstructured.Unstructured `json:"data,omitempty"`

	// Descriptor is the module's OCM component descriptor.
	// +kubebuilder:pruning:PreserveUnknownFields
	Descriptor runtime.RawExtension `json:"descriptor"`

	// CustomStateCheck maps values of the module CR to states. This is the
	// older way; module CRs should report status.state.
	// +optional
	CustomStateCheck []*CustomStateCheck `json:"customStateCheck,omitempty"`

	// Resources are links to further resources of the module.
	// +optional
	// +listType=map
	// +listMapKey=name
	Resources []Resource `json:"resources,omitempty"`

	// Info describes the module for catalogs.
	// +optional
	Info *ModuleInfo `json:"info,omitempty"`

	// AssociatedResources are kinds that belong to the module: its removal
	// from a runtime waits until no object of them is left there (see
	// ManifestSpec.AssociatedResources).
	// +optional
	AssociatedResources []metav1.GroupVersionKind `json:"associatedResources,omitempty"`

	// Manager identifies the resource whose readiness is the module's, usually
	// its operator Deployment (see ManifestSpec.Manager).
	// +optional
	Manager *Manager `json:"manager,omitempty"`

	// RequiresDowntime upgrades wait for the runtime's maintenance window.
	// +optional
	RequiresDowntime bool `json:"requiresDowntime,omitempty"`
}

// Manager identifies a module's manager resource.
type Manager struct {
	metav1.GroupVersionKind `json:",inline"`

	// Namespace of the manager.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the manager.
	Name string `json:"name"`
}

// ModuleInfo describes a module for catalogs.
type ModuleInfo struct {
	// Repository is the link to the module's source.
	Repository string `json:"repository"`
	// Documentation is the link to the module's documentation.
	Documentation string `json:"documentation"`
	// Icons of the module.
	// +optional
	// +listType=map
	// +listMapKey=name
	Icons []ModuleIcon `json:"icons,omitempty"`
}

// ModuleIcon is one icon of a module.
type ModuleIcon struct {
	// Name of the icon.
	Name string `json:"name"`
	// Link to the icon.
	Link string `json:"link"`
}

// Resource is a link to a resource of a module.
type Resource struct {
	// Name of the resource.
	Name string `json:"name"`
	// Link to the resource.
	// +kubebuilder:validation:Format=uri
	Link string `json:"link"`
}

// CustomStateCheck maps the value at a JSON path of the module CR to a state.
type CustomStateCheck struct {
	// JSONPath to the value in the module CR, e.g. status.health (a
	// leading dot and {} are optional).
	JSONPath string `json:"jsonPath"`
	// Value at JSONPath that maps to MappedState.
	Value string `json:"value"`
	// MappedState is the state the value means.
	MappedState shared.State `json:"mappedState"`
}

// ModuleTemplateList is a list of ModuleTemplates.
//
// +kubebuilder:object:root=true
type ModuleTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModuleTemplate `json:"items"`
}

// IsBeta reports whether t is a beta module.
func (t *ModuleTemplate) IsBeta() bool { return shared.IsEnabled(t.Labels, shared.BetaLabel) }

// IsInternal reports whether t is an internal module.
func (t *ModuleTemplate) IsInternal() bool { return shared.IsEnabled(t.Labels, shared.InternalLabel) }
