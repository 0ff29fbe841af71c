package contentpolicy

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdGroupKind is the kind of CustomResourceDefinitions.
var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// module is what the conditions know of the module an object belongs to.
type module struct {
	name string
	// privileged modules are exempt from the wildcard and broad conditions.
	privileged bool
	// groups are the API groups of the CRDs the module renders, Kubernetes'
	// own groups aside: a module may do everything to its own kinds.
	groups map[string]bool
	// wildcardRoles are the module's roles that grant a wildcard, by
	// roleKey, with why.
	wildcardRoles map[string]string
}

func (p *Policy) module(name string, objs []*unstructured.Unstructured) *module {
	m := &module{name: name, privileged: p.privileged[name], groups: map[string]bool{}, wildcardRoles: map[string]string{}}
	for _, gk := range ShippedKinds(objs) {
		m.groups[gk.Group] = true
	}
	for _, o := range objs {
		kind := o.GroupVersionKind()
		if kind.Group != rbacGroup || (kind.Kind != "ClusterRole" && kind.Kind != "Role") {
			continue
		}
		if why, wild := m.wildcardRole(o); wild {
			m.wildcardRoles[roleKey(kind.Kind, o.GetNamespace(), o.GetName())] = why
		}
	}
	return m
}

const rbacGroup = "rbac.authorization.k8s.io"

// ReservedGroup reports whether group is Kubernetes' own: the core group
// and the groups under k8s.io and kubernetes.io. A CRD in such a group
// does not make the group the module's: the built-in kinds of the group
// would be taken for the module's.
func ReservedGroup(group string) bool {
	return group == "" || group == "k8s.io" || group == "kubernetes.io" ||
		strings.HasSuffix(group, ".k8s.io") || strings.HasSuffix(group, ".kubernetes.io")
}

// ShippedKinds are the kinds the CRDs among objs define, those in a
// ReservedGroup aside.
func ShippedKinds(objs []*unstructured.Unstructured) []schema.GroupKind {
	return slices.DeleteFunc(crdKinds(objs), func(gk schema.GroupKind) bool { return ReservedGroup(gk.Group) })
}

// crdKinds are the kinds the CRDs among objs define.
func crdKinds(objs []*unstructured.Unstructured) []schema.GroupKind {
	var out []schema.GroupKind
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != crdGroupKind {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if kind != "" {
			out = append(out, schema.GroupKind{Group: group, Kind: kind})
		}
	}
	return out
}

func roleKey(kind, namespace, name string) string {
	if kind == "ClusterRole" {
		namespace = ""
	}
	return kind + " " + namespace + "/" + name
}

// wildcardRole says why a ClusterRole or Role grants a wildcard: every verb
// in every API group, or every verb on every resource of a group that is
// not one of the module's own; or, for a ClusterRole, an aggregationRule,
// as the rules it gets are those of whatever ClusterRoles its selectors
// match (an empty selector matches cluster-admin).
func (m *module) wildcardRole(o *unstructured.Unstructured) (string, bool) {
	selectors, _, _ := unstructured.NestedSlice(o.Object, "aggregationRule", "clusterRoleSelectors")
	if o.GetKind() == "ClusterRole" && len(selectors) > 0 {
		return "it aggregates the rules of the ClusterRoles its selectors match", true
	}
	rules, _, err := unstructured.NestedSlice(o.Object, "rules")
	if err != nil {
		return "its rules are not a list", true
	}
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		if !slices.Contains(strs(rule["verbs"]), "*") {
			continue
		}
		groups := strs(rule["apiGroups"])
		if slices.Contains(groups, "*") {
			return fmt.Sprintf("rule %d grants every verb in every API group", i), true
		}
		if !slices.Contains(strs(rule["resources"]), "*") {
			continue
		}
		for _, g := range groups {
			if !m.groups[g] {
				return fmt.Sprintf("rule %d grants every verb on every resource of %s", i, groupName(g)), true
			}
		}
	}
	return "", false
}

// wildcardBinding says why a binding grants a wildcard role: cluster-admin,
// or a role of the module that grants a wildcard. Roles the module does not
// render are not known here.
func (m *module) wildcardBinding(o *unstructured.Unstructured) (string, bool) {
	kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
	if kind == "ClusterRole" && name == "cluster-admin" {
		return "its roleRef is the ClusterRole cluster-admin", true
	}
	if why, wild := m.wildcardRoles[roleKey(kind, o.GetNamespace(), name)]; wild {
		return fmt.Sprintf("its roleRef, the module's %s %s, grants a wildcard: %s", kind, name, why), true
	}
	return "", false
}

// broadWebhook says why a webhook configuration sees more than the
// module's own: a rule of one of its webhooks matches every resource of a
// group that is not the module's, or Secrets. Selectors do not count: the
// module chooses the labels they select by as much as the selectors.
func (m *module) broadWebhook(o *unstructured.Unstructured) (string, bool) {
	webhooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
	if err != nil {
		return "its webhooks are not a list", true
	}
	for i, w := range webhooks {
		hook, _ := w.(map[string]any)
		rules, _ := hook["rules"].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			scope, _ := rule["scope"].(string)
			if why := m.broadRule(strs(rule["apiGroups"]), strs(rule["resources"]), scope); why != "" {
				return fmt.Sprintf("webhook %d sees %s", i, why), true
			}
		}
	}
	return "", false
}

func (m *module) broadRule(groups, resources []string, scope string) string {
	every := slices.Contains(resources, "*") || slices.Contains(resources, "*/*")
	secrets := scope != "Cluster" && (slices.Contains(resources, "secrets") || slices.Contains(resources, "secrets/*"))
	for _, g := range groups {
		switch {
		case every && !m.groups[g]:
			return "every resource of " + groupName(g)
		case secrets && (g == "" || g == "*"):
			return "every Secret"
		}
	}
	return ""
}

func groupName(g string) string {
	switch g {
	case "":
		return "the core API group"
	case "*":
		return "every API group"
	default:
		return "the API group " + g
	}
}

// strs reads a list of strings; what is not a string is left out.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
