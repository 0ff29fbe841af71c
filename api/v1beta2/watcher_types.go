package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
)

// Watcher asks for change events of one resource in every runtime, delivered
// to a manager in the KCP.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=".status.state"
// +kubebuilder:printcolumn:name="Manager",type=string,JSONPath=".spec.manager"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Watcher struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WatcherSpec   `json:"spec,omitempty"`
	Status WatcherStatus `json:"status,omitempty"`
}

// WatcherSpec says what to watch and where to send the events.
type WatcherSpec struct {
	// ServiceInfo is the KCP service that receives the events.
	ServiceInfo Service `json:"serviceInfo"`

	// Manager is the event path segment: events go to /v<contract>/<manager>/event.
	// When empty, the Watcher's managed-by label is used, as the public
	// lifecycle manager does.
	// +optional
	// +kubebuilder:validation:Pattern:=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	// +kubebuilder:validation:MaxLength:=63
	Manager string `json:"manager,omitempty"`

	// LabelsToWatch selects the watched objects by label.
	// +optional
	LabelsToWatch map[string]string `json:"labelsToWatch,omitempty"`

	// ResourceToWatch is the watched resource.
	ResourceToWatch WatchableGVR `json:"resourceToWatch"`

	// Field is the part of the object whose changes matter.
	Field FieldName `json:"field"`

	// Gateway selects the Istio Gateway that exposes the event route.
	Gateway GatewayConfig `json:"gateway"`
}

// Service is a KCP service.
type Service struct {
	// Port of the service.
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=65535
	Port int64 `json:"port"`
	// Name of the service.
	Name string `json:"name"`
	// Namespace of the service.
	Namespace string `json:"namespace"`
}

// WatchableGVR is the group, version and resource of the watched objects.
type WatchableGVR struct {
	// Group of the resource; empty for the core group.
	Group string `json:"group"`
	// Version of the resource.
	// +kubebuilder:validation:MinLength:=1
	Version string `json:"version"`
	// Resource is the plural resource name, e.g. kymas.
	// +kubebuilder:validation:MinLength:=1
	Resource string `json:"resource"`
}

// FieldName is the watched part of an object.
// +kubebuilder:validation:Enum=spec;status
type FieldName string

// Watchable fields.
const (
	FieldSpec   FieldName = "spec"
	FieldStatus FieldName = "status"
)

// GatewayConfig selects an Istio Gateway.
type GatewayConfig struct {
	// LabelSelector selects the Gateway by its labels. The JSON name is
	// "selector", as in the public lifecycle manager.
	LabelSelector metav1.LabelSelector `json:"selector"`
}

// WatcherStatus is what the Watcher controller observed.
type WatcherStatus struct {
	// State of the Watcher.
	// +optional
	State shared.State `json:"state,omitempty"`
	// Conditions: VirtualService.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ConditionVirtualService is the Watcher condition for its VirtualService.
const ConditionVirtualService = "VirtualService"

// WatcherList is a list of Watchers.
//
// +kubebuilder:object:root=true
type WatcherList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Watcher `json:"items"`
}

// ManagerName is the manager the events go to: spec.manager, else the managed-by label.
func (w *Watcher) ManagerName() string {
	if w.Spec.Manager != "" {
		return w.Spec.Manager
	}
	return w.Labels[shared.ManagedByLabel]
}
