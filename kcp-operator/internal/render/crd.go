package render

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRDGroupKind is the kind of CustomResourceDefinitions.
var CRDGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

var namespaceGroupKind = schema.GroupKind{Kind: "Namespace"}

// IsCRD reports whether obj is a CustomResourceDefinition.
func IsCRD(obj *unstructured.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == CRDGroupKind
}

// DefinedKind is a kind a CRD among the rendered objects defines.
type DefinedKind struct {
	schema.GroupKind
	// CRD is the name of the defining CustomResourceDefinition.
	CRD string
	// Plural is the resource name, e.g. kedas.
	Plural string
	// Namespaced is true for spec.scope Namespaced.
	Namespaced bool
	// Versions are the served versions, storage version first.
	Versions []string
}

// DefinedKinds returns the kinds the CRDs among objs define, in the order
// of the CRDs. A CRD without group, kind, plural or scope is an error.
func DefinedKinds(objs []*unstructured.Unstructured) ([]DefinedKind, error) {
	var out []DefinedKind
	for _, obj := range objs {
		if !IsCRD(obj) {
			continue
		}
		k, err := definedKind(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describe(obj), err)
		}
		out = append(out, k)
	}
	return out, nil
}

func definedKind(crd *unstructured.Unstructured) (DefinedKind, error) {
	str := func(fields ...string) string {
		s, _, _ := unstructured.NestedString(crd.Object, fields...)
		return s
	}
	k := DefinedKind{
		GroupKind: schema.GroupKind{Group: str("spec", "group"), Kind: str("spec", "names", "kind")},
		CRD:       crd.GetName(),
		Plural:    str("spec", "names", "plural"),
	}
	switch {
	case k.Group == "":
		return DefinedKind{}, errors.New("spec.group is missing")
	case k.Kind == "":
		return DefinedKind{}, errors.New("spec.names.kind is missing")
	case k.Plural == "":
		return DefinedKind{}, errors.New("spec.names.plural is missing")
	}
	switch scope := str("spec", "scope"); scope {
	case "Namespaced":
		k.Namespaced = true
	case "Cluster":
	default:
		return DefinedKind{}, fmt.Errorf("spec.scope %q is neither Namespaced nor Cluster", scope)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		served, _ := m["served"].(bool)
		if name == "" || !served {
			continue
		}
		if storage, _ := m["storage"].(bool); storage {
			k.Versions = append([]string{name}, k.Versions...)
		} else {
			k.Versions = append(k.Versions, name)
		}
	}
	return k, nil
}

// applyRank orders objects for apply: CRDs, then namespaces, then other
// cluster-scoped objects, then namespaced ones.
func applyRank(obj *unstructured.Unstructured) int {
	switch gk := obj.GroupVersionKind().GroupKind(); {
	case gk == CRDGroupKind:
		return 0
	case gk == namespaceGroupKind:
		return 1
	case obj.GetNamespace() == "":
		return 2
	default:
		return 3
	}
}

// SortForApply orders objects as Render returns them (namespaced objects
// carry their namespace, cluster-scoped ones none) for applying: CRDs
// first, then namespaces, then other cluster-scoped objects, then the
// namespaced ones; the order within each group is kept.
func SortForApply(objs []*unstructured.Unstructured) {
	sort.SliceStable(objs, func(i, j int) bool { return applyRank(objs[i]) < applyRank(objs[j]) })
}
