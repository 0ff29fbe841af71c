package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Manifest installs one module into one runtime, in the shape of the
// original documentation.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:unservedversion
// +kubebuilder:deprecatedversion:warning="operator.kyma-project.io/v1beta1 Manifest is deprecated; use v1beta2"
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Manifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ManifestSpec `json:"spec,omitempty"`
	// Status is the same in both versions.
	Status v1beta2.ManifestStatus `json:"status,omitempty"`
}

// ManifestSpec says what to install and where.
type ManifestSpec struct {
	// Remote true installs into the Kyma's runtime. false (the KCP itself)
	// is refused as it is in v1beta2: a v1beta1 write is checked against
	// this schema only, so v1beta2's rules must be here too.
	// +kubebuilder:validation:XValidation:rule="self",message="spec.remote: false (install into the control plane) is not supported, as in v1beta2: modules are installed only into runtimes"
	Remote bool `json:"remote"`

	// Version of the module.
	// +optional
	Version string `json:"version,omitempty"`

	// Config is the OCI layer with the module's configuration values.
	// +optional
	Config *v1beta2.ImageSpec `json:"config,omitempty"`

	// Install names the layer with the module's resources.
	Install v1beta2.InstallInfo `json:"install"`

	// Resource is the module's default custom resource.
	// +optional
	// +nullable
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:XEmbeddedResource
	Resource *unstructured.Unstructured `json:"resource,omitempty"`

	// CustomResourcePolicy says whether Resource is created and deleted with the module.
	// +optional
	// +kubebuilder:default:=CreateAndDelete
	CustomResourcePolicy v1beta2.CustomResourcePolicy `json:"customResourcePolicy,omitempty"`
}

// ManifestList is a list of Manifests.
//
// +kubebuilder:object:root=true
type ManifestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Manifest `json:"items"`
}
