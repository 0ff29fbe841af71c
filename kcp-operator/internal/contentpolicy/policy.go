package contentpolicy

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition says which objects of a rule's kind are denied.
type Condition string

// Conditions of a rule; see the package doc.
const (
	Always       Condition = "always"
	ClusterAdmin Condition = "cluster-admin"
	Foreign      Condition = "foreign"
)

// Defaults are the default rules (the default of --module-denied-kinds).
func Defaults() []string {
	return []string{
		"rbac.authorization.k8s.io/ClusterRoleBinding:cluster-admin",
		"rbac.authorization.k8s.io/RoleBinding:cluster-admin",
		"admissionregistration.k8s.io/ValidatingWebhookConfiguration:foreign",
		"admissionregistration.k8s.io/MutatingWebhookConfiguration:foreign",
	}
}

// Rule denies objects of a kind, when its condition holds.
type Rule struct {
	// Group of the kind; AnyGroup matches every group.
	Group    string
	AnyGroup bool
	Kind     string
	When     Condition
}

func (r Rule) String() string {
	kind := r.Kind
	switch {
	case r.AnyGroup:
	case r.Group == "":
		kind = "core/" + kind
	default:
		kind = r.Group + "/" + kind
	}
	return kind + ":" + string(r.When)
}

// ParseRule reads one rule, [GROUP/]KIND[:CONDITION].
func ParseRule(spec string) (Rule, error) {
	kind, cond, hasCond := strings.Cut(strings.TrimSpace(spec), ":")
	r := Rule{Kind: kind, AnyGroup: true, When: Always}
	if group, k, ok := strings.Cut(kind, "/"); ok {
		r.AnyGroup, r.Group, r.Kind = false, group, k
		if group == "core" {
			r.Group = ""
		}
	}
	if hasCond {
		r.When = Condition(cond)
	}
	switch {
	case r.Kind == "" || strings.ContainsAny(r.Kind, "/ ") || (!r.AnyGroup && r.Group == "" && !strings.HasPrefix(kind, "core/")):
		return Rule{}, fmt.Errorf("rule %q: want [GROUP/]KIND[:CONDITION], e.g. rbac.authorization.k8s.io/ClusterRoleBinding:cluster-admin", spec)
	case r.When != Always && r.When != ClusterAdmin && r.When != Foreign:
		return Rule{}, fmt.Errorf("rule %q: the condition %q is none of %s, %s, %s", spec, r.When, Always, ClusterAdmin, Foreign)
	}
	return r, nil
}

// Policy is a list of rules. A nil *Policy denies nothing.
type Policy struct {
	rules []Rule
}

// Parse reads rules; empty entries are skipped, so an empty list denies nothing.
func Parse(specs []string) (*Policy, error) {
	p := &Policy{}
	var errs []error
	for _, spec := range specs {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		r, err := ParseRule(spec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.rules = append(p.rules, r)
	}
	return p, errors.Join(errs...)
}

// Rules returns the policy's rules.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.rules...)
}

// Violation is one denied object.
type Violation struct {
	// Object is "Kind name" or "Kind namespace/name".
	Object string
	Rule   Rule
	// Why the condition holds.
	Why string
}

// DeniedError lists the denied objects of a module.
type DeniedError struct {
	Module     string
	Violations []Violation
}

// maxListed bounds the violations an error message names.
const maxListed = 5

func (e *DeniedError) Error() string {
	parts := make([]string, 0, min(len(e.Violations), maxListed))
	for i, v := range e.Violations {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Violations)-maxListed))
			break
		}
		parts = append(parts, fmt.Sprintf("%s is denied by rule %s (%s)", v.Object, v.Rule, v.Why))
	}
	return fmt.Sprintf("module %s renders content the operator refuses to apply: %s", e.Module, strings.Join(parts, "; "))
}

// Check returns a *DeniedError naming every object of module that a rule
// denies, or nil.
func (p *Policy) Check(module string, objs []*unstructured.Unstructured) error {
	if p == nil || len(p.rules) == 0 {
		return nil
	}
	var found []Violation
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		for _, r := range p.rules {
			if r.Kind != gvk.Kind || (!r.AnyGroup && r.Group != gvk.Group) {
				continue
			}
			if why, denied := r.When.holds(module, o); denied {
				found = append(found, Violation{Object: describe(o), Rule: r, Why: why})
				break
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	return &DeniedError{Module: module, Violations: found}
}

// holds says whether the condition denies o, and why.
func (c Condition) holds(module string, o *unstructured.Unstructured) (string, bool) {
	switch c {
	case ClusterAdmin:
		kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		return "its roleRef is the ClusterRole cluster-admin", kind == "ClusterRole" && name == "cluster-admin"
	case Foreign:
		return foreignWebhook(module, o)
	default:
		return "the kind is denied", true
	}
}

// foreignWebhook says why a webhook configuration is not the module's.
func foreignWebhook(module string, o *unstructured.Unstructured) (string, bool) {
	name := o.GetName()
	if name != module && !strings.HasPrefix(name, module+"-") && !strings.HasPrefix(name, module+".") {
		return fmt.Sprintf("its name does not start with the module name %q", module), true
	}
	webhooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
	if err != nil {
		return "its webhooks are not a list", true
	}
	for i, w := range webhooks {
		hook, _ := w.(map[string]any)
		if _, hasURL, _ := unstructured.NestedFieldNoCopy(hook, "clientConfig", "url"); hasURL {
			return fmt.Sprintf("webhook %d calls a URL instead of a Service", i), true
		}
	}
	return "", false
}

func describe(o *unstructured.Unstructured) string {
	name := o.GetName()
	if ns := o.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return o.GetKind() + " " + name
}
