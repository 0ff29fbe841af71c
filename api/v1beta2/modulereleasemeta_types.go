package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ModuleReleaseMeta maps the channels of a module to its versions.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:singular=modulereleasemeta,path=modulereleasemetas,shortName=mrm
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Module",type=string,JSONPath=".spec.moduleName"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ModuleReleaseMeta struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ModuleReleaseMetaSpec `json:"spec,omitempty"`
}

// ModuleReleaseMetaSpec assigns versions to channels, or one mandatory version.
//
// +kubebuilder:validation:XValidation:rule="has(self.channels) != has(self.mandatory)",message="exactly one of channels and mandatory must be set"
type ModuleReleaseMetaSpec struct {
	// ModuleName is the name users write in a Kyma.
	// +kubebuilder:validation:Pattern:=`^([a-z]{3,}(-[a-z]{3,})*)?$`
	// +kubebuilder:validation:MaxLength:=64
	ModuleName string `json:"moduleName"`

	// OcmComponentName is the module's OCM component name.
	// +optional
	// +kubebuilder:validation:MaxLength:=255
	OcmComponentName string `json:"ocmComponentName,omitempty"`

	// Channels assigns a version to each channel.
	// +optional
	// +listType=map
	// +listMapKey=channel
	// +kubebuilder:validation:MinItems:=1
	Channels []ChannelVersionAssignment `json:"channels,omitempty"`

	// Mandatory makes the module mandatory in the given version.
	// +optional
	Mandatory *Mandatory `json:"mandatory,omitempty"`

	// Beta modules are available to Kymas labelled beta only.
	// +optional
	Beta bool `json:"beta,omitempty"`

	// Internal modules are available to Kymas labelled internal only.
	// +optional
	Internal bool `json:"internal,omitempty"`

	// KymaSelector restricts the module to the Kymas whose labels it selects; a module with a
	// selector is offered to, resolved for and installed on no other Kyma.
	// +optional
	KymaSelector *metav1.LabelSelector `json:"kymaSelector,omitempty"`
}

// ChannelVersionAssignment is the version of a module in one channel.
type ChannelVersionAssignment struct {
	// Channel name.
	// +kubebuilder:validation:Pattern:=`^[a-z]+$`
	// +kubebuilder:validation:MinLength:=3
	// +kubebuilder:validation:MaxLength:=32
	Channel string `json:"channel"`

	// Version of the module in the channel.
	// +kubebuilder:validation:Pattern:=`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	// +kubebuilder:validation:MaxLength:=64
	Version string `json:"version"`
}

// Mandatory is the version of a mandatory module.
type Mandatory struct {
	// Version of the mandatory module.
	// +kubebuilder:validation:Pattern:=`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	// +kubebuilder:validation:MaxLength:=64
	Version string `json:"version"`
}

// ModuleReleaseMetaList is a list of ModuleReleaseMetas.
//
// +kubebuilder:object:root=true
type ModuleReleaseMetaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModuleReleaseMeta `json:"items"`
}

// VersionFor returns the version assigned to channel, if any.
func (m *ModuleReleaseMeta) VersionFor(channel string) (string, bool) {
	for _, c := range m.Spec.Channels {
		if c.Channel == channel {
			return c.Version, true
		}
	}
	return "", false
}
