package shared

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// LastOperation records the last thing a controller did or failed to do.
type LastOperation struct {
	// Operation is a human-readable description of the last operation.
	Operation string `json:"operation"`
	// LastUpdateTime is when the operation happened.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
}

// Resource identifies one object that a Manifest placed in a runtime.
type Resource struct {
	// Name of the object.
	Name string `json:"name"`
	// Namespace of the object; empty for cluster-scoped objects.
	Namespace string `json:"namespace"`

	metav1.GroupVersionKind `json:",inline"`
}
