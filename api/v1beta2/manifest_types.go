package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
)

// Manifest installs one module into one runtime.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=".spec.version"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Manifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ManifestSpec   `json:"spec,omitempty"`
	Status ManifestStatus `json:"status,omitempty"`
}

// ManifestSpec says what to install and where.
type ManifestSpec struct {
	// Remote must be true: the module is installed into the Kyma's runtime.
	// The public API's false (install into the control plane itself) is
	// refused: the operator's control-plane identity is kept too narrow to
	// apply module content, and it holds every runtime's credentials, which
	// module content must never reach. A control plane that should run a
	// module is made a runtime like any other, with an access Secret of its
	// own scoped identity (or, for local use, the operator runs with the
	// feature gate SingleCluster).
	// +kubebuilder:validation:XValidation:rule="self",message="spec.remote: false (install into the control plane) is not supported: modules are installed only into runtimes, because the operator's control-plane credentials must not apply module content; give the control plane an access Secret like any runtime, or run the operator with --feature-gates=SingleCluster=true"
	Remote bool `json:"remote"`

	// Version of the module.
	// +optional
	Version string `json:"version,omitempty"`

	// Config is the OCI layer with the module's configuration values.
	// +optional
	Config *ImageSpec `json:"config,omitempty"`

	// Install names the layer with the module's resources.
	Install InstallInfo `json:"install"`

	// Resource is the module's default custom resource.
	// +optional
	// +nullable
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:XEmbeddedResource
	Resource *unstructured.Unstructured `json:"resource,omitempty"`

	// CustomResourcePolicy says whether Resource is created and deleted with the module.
	// +optional
	// +kubebuilder:default:=CreateAndDelete
	CustomResourcePolicy CustomResourcePolicy `json:"customResourcePolicy,omitempty"`

	// LocalizedImages are image references that replace images of the same
	// repository name in the rendered resources (for mirrored registries).
	// +optional
	LocalizedImages []string `json:"localizedImages,omitempty"`

	// Manager is the module's manager, from the ModuleTemplate: when set,
	// the module's workloads are ready when this object is (a Deployment or
	// StatefulSet whose rollout is complete; any other kind once it
	// exists), instead of when all its Deployments and StatefulSets are.
	// Without a namespace, a namespaced manager is in the runtime's sync
	// namespace.
	// +optional
	Manager *Manager `json:"manager,omitempty"`

	// CustomStateCheck maps values of the module CR to the module's state,
	// from the ModuleTemplate. Without it, the CR's status.state is the state.
	// +optional
	// +listType=atomic
	CustomStateCheck []CustomStateCheck `json:"customStateCheck,omitempty"`

	// AssociatedResources are kinds, from the ModuleTemplate, whose objects
	// in the runtime (in every namespace) the module's deletion waits for
	// before it removes the module: those the module applied are deleted,
	// others are waited for, never deleted.
	// +optional
	// +listType=atomic
	AssociatedResources []metav1.GroupVersionKind `json:"associatedResources,omitempty"`
}

// InstallInfo names the layer with the module's resources.
type InstallInfo struct {
	// Source is the layer, an ImageSpec.
	// +kubebuilder:pruning:PreserveUnknownFields
	Source runtime.RawExtension `json:"source"`

	// Name of the layer, e.g. raw-manifest.
	Name string `json:"name"`
}

// ImageSpec addresses one OCI layer.
type ImageSpec struct {
	// Repo is the registry and repository base, e.g. registry.example.com/modules.
	// +optional
	Repo string `json:"repo,omitempty"`
	// Name is the repository name below Repo.
	// +optional
	Name string `json:"name,omitempty"`
	// Ref is the layer digest (sha256:…), a tag or a version.
	// +optional
	Ref string `json:"ref,omitempty"`
	// Type of the layer's content.
	// +optional
	// +kubebuilder:validation:Enum=helm-chart;oci-ref;oci-dir;kustomize;raw-manifest;""
	Type RefType `json:"type,omitempty"`
	// CredSecretSelector selects the Secret with registry credentials, in the
	// Manifest's namespace.
	// +optional
	CredSecretSelector *metav1.LabelSelector `json:"credSecretSelector,omitempty"`
}

// RefType is the kind of content an OCI layer holds.
type RefType string

// Layer content types.
const (
	RefTypeHelmChart   RefType = "helm-chart"
	RefTypeOCIRef      RefType = "oci-ref"
	RefTypeRawManifest RefType = "raw-manifest"
)

// ManifestStatus is what the Manifest controller observed.
type ManifestStatus struct {
	// State of the module installation.
	// +optional
	State shared.State `json:"state,omitempty"`

	// Conditions: Resources, ModuleCR and Installation.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Synced lists every object applied into the runtime, for pruning and deletion.
	// +optional
	// +listType=atomic
	Synced []shared.Resource `json:"synced,omitempty"`

	// Created lists the objects of status.synced that the controller
	// created in the runtime — as opposed to found there and applied into —
	// with the UID they were created with. Only a Namespace listed here is
	// deleted with the module, and only while it still has that UID.
	// +optional
	// +listType=atomic
	Created []CreatedResource `json:"created,omitempty"`

	// LastOperation is the last thing the controller did with this Manifest.
	// +optional
	LastOperation shared.LastOperation `json:"lastOperation,omitempty"`

	// Applied identifies what the controller last applied to the runtime:
	// the hash of the rendered module and a fingerprint of the versions the
	// runtime stored. A reconcile that finds both unchanged only reads.
	// +optional
	Applied string `json:"applied,omitempty"`
}

// CreatedResource is an object the Manifest controller created in the runtime.
type CreatedResource struct {
	shared.Resource `json:",inline"`

	// UID of the object as created: a later object of the same name is not
	// the one the controller created.
	UID types.UID `json:"uid"`
}

// Condition types of a Manifest.
const (
	ConditionResources    = "Resources"
	ConditionModuleCR     = "ModuleCR"
	ConditionInstallation = "Installation"
)

// ManifestList is a list of Manifests.
//
// +kubebuilder:object:root=true
type ManifestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Manifest `json:"items"`
}

// SkipsReconciliation reports whether the skip-reconciliation label stops all work on m.
func (m *Manifest) SkipsReconciliation() bool {
	return shared.IsEnabled(m.Labels, shared.SkipReconciliationLabel)
}
