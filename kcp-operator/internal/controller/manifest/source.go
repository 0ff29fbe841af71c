package manifest

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Source renders what a Manifest installs.
type Source interface {
	// Render returns the module's objects for the target, in apply order
	// (CRDs, namespaces, other cluster-scoped objects, the rest).
	Render(ctx context.Context, mf *v1beta2.Manifest, target Target) (*Rendered, error)
}

// Target is the runtime the objects are rendered for.
type Target struct {
	// Namespace is the default for namespaced objects without one.
	Namespace string
	// Namespaced tells the scope of a kind the render does not define itself.
	Namespaced func(schema.GroupVersionKind) (bool, error)
}

// Rendered is a render result.
type Rendered struct {
	Objects []*unstructured.Unstructured
	// Hash identifies the content (layer digests, values, target): equal
	// hashes mean equal objects.
	Hash string
	// Ignored names what of the Manifest the render could not use; each
	// apply tells it in a Warning Event.
	Ignored []string
}
