package contentpolicy

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NotShippedError says that a module's default CR is not of a kind the
// module's own CRDs define.
type NotShippedError struct {
	Module string
	// Object is "Kind name" or "Kind namespace/name".
	Object string
	// Kind is the default CR's kind, as Rule prints kinds (core/Secret).
	Kind  string
	Group string
	// Shipped are the kinds the module's CRDs define, as Kind.Group.
	Shipped []string
	// Reserved is set when a CRD of the module defines the kind in one of
	// Kubernetes' own groups (see ReservedGroup).
	Reserved bool
}

func (e *NotShippedError) Error() string {
	why := "the module's CRDs define none"
	switch {
	case e.Reserved:
		why = "a CRD of the module defines it in Kubernetes' own API group " + e.Group + ", which no module may claim"
	case len(e.Shipped) > 0:
		why = "the module's CRDs define " + strings.Join(e.Shipped, ", ")
	}
	return fmt.Sprintf("the default CR of module %s is refused: %s is of kind %s, which no CRD of the module defines (%s)",
		e.Module, e.Object, e.Kind, why)
}

// CheckShipped returns a *NotShippedError unless the default CR cr is of a
// kind that a CRD among objs, the module's rendered objects, defines, in a
// group that is not a ReservedGroup. The operator creates the default CR
// with its own credentials: of any other kind it would be whatever the
// publisher chose, a ClusterRoleBinding or a Namespace, and removing the
// module would delete the object it names.
func CheckShipped(module string, cr *unstructured.Unstructured, objs []*unstructured.Unstructured) error {
	if cr == nil {
		return nil
	}
	gk := cr.GroupVersionKind().GroupKind()
	shipped := ShippedKinds(objs)
	if slices.Contains(shipped, gk) {
		return nil
	}
	names := make([]string, len(shipped))
	for i, k := range shipped {
		names[i] = k.String()
	}
	return &NotShippedError{
		Module: module, Object: describe(cr), Kind: kindName(gk.Group, gk.Kind), Group: gk.Group,
		Shipped: names, Reserved: slices.Contains(crdKinds(objs), gk),
	}
}
