package contentpolicy

import (
	"errors"
	"fmt"
	"slices"
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
	Wildcard     Condition = "wildcard"
	Broad        Condition = "broad"
)

var conditions = []Condition{Always, ClusterAdmin, Foreign, Wildcard, Broad}

// Defaults are the default rules (the default of --module-denied-kinds).
func Defaults() []string {
	return []string{
		"rbac.authorization.k8s.io/ClusterRoleBinding:cluster-admin",
		"rbac.authorization.k8s.io/RoleBinding:cluster-admin",
		"admissionregistration.k8s.io/ValidatingWebhookConfiguration:foreign",
		"admissionregistration.k8s.io/MutatingWebhookConfiguration:foreign",
		"rbac.authorization.k8s.io/ClusterRole:wildcard",
		"rbac.authorization.k8s.io/ClusterRoleBinding:wildcard",
		"admissionregistration.k8s.io/ValidatingWebhookConfiguration:broad",
		"admissionregistration.k8s.io/MutatingWebhookConfiguration:broad",
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
	if r.AnyGroup {
		return r.Kind + ":" + string(r.When)
	}
	return kindName(r.Group, r.Kind) + ":" + string(r.When)
}

// kindName is GROUP/KIND, with core for the core group.
func kindName(group, kind string) string {
	if group == "" {
		group = "core"
	}
	return group + "/" + kind
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
	case !slices.Contains(conditions, r.When):
		return Rule{}, fmt.Errorf("rule %q: the condition %q is none of %v", spec, r.When, conditions)
	}
	return r, nil
}

// Policy is a list of rules. A nil *Policy denies nothing.
type Policy struct {
	rules []Rule
	// privileged modules are exempt from the wildcard and broad conditions.
	privileged map[string]bool
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

// WithPrivileged returns a copy of the policy under which the modules
// named are exempt from the wildcard and broad conditions (and from no
// other): a fleet's operator lists the modules it trusts with
// cluster-wide power, such as a backup tool whose manager needs every
// verb on every resource.
func (p *Policy) WithPrivileged(modules []string) *Policy {
	if p == nil {
		return nil
	}
	out := &Policy{rules: p.rules, privileged: map[string]bool{}}
	for _, m := range modules {
		if m = strings.TrimSpace(m); m != "" {
			out.privileged[m] = true
		}
	}
	return out
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
	Module string
	// DefaultCR is set when the object is the module's default CR.
	DefaultCR  bool
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
	if e.DefaultCR {
		return fmt.Sprintf("the default CR of module %s is refused: %s", e.Module, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("module %s renders content the operator refuses to apply: %s", e.Module, strings.Join(parts, "; "))
}

// Check returns a *DeniedError naming every object of module that a rule
// denies, or nil. objs are all the module renders: the conditions judge an
// object by the module's CRDs and roles.
func (p *Policy) Check(module string, objs []*unstructured.Unstructured) error {
	if p == nil || len(p.rules) == 0 {
		return nil
	}
	if found := p.violations(p.module(module, objs), objs); len(found) > 0 {
		return &DeniedError{Module: module, Violations: found}
	}
	return nil
}

// CheckDefaultCR returns a *DeniedError when a rule denies the module's
// default CR cr, judged with objs, the module's rendered objects, as Check
// judges them; or nil.
func (p *Policy) CheckDefaultCR(module string, cr *unstructured.Unstructured, objs []*unstructured.Unstructured) error {
	if p == nil || len(p.rules) == 0 || cr == nil {
		return nil
	}
	if found := p.violations(p.module(module, objs), []*unstructured.Unstructured{cr}); len(found) > 0 {
		return &DeniedError{Module: module, DefaultCR: true, Violations: found}
	}
	return nil
}

func (p *Policy) violations(m *module, objs []*unstructured.Unstructured) []Violation {
	var found []Violation
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		for _, r := range p.rules {
			if r.Kind != gvk.Kind || (!r.AnyGroup && r.Group != gvk.Group) {
				continue
			}
			if why, denied := r.When.holds(m, o); denied {
				found = append(found, Violation{Object: describe(o), Rule: r, Why: why})
				break
			}
		}
	}
	return found
}

// holds says whether the condition denies o, and why.
func (c Condition) holds(m *module, o *unstructured.Unstructured) (string, bool) {
	switch c {
	case ClusterAdmin:
		kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
		return "its roleRef is the ClusterRole cluster-admin", kind == "ClusterRole" && name == "cluster-admin"
	case Foreign:
		return foreignWebhook(m.name, o)
	case Wildcard:
		if m.privileged {
			return "", false
		}
		if _, isBinding := o.Object["roleRef"]; isBinding {
			return m.wildcardBinding(o)
		}
		return m.wildcardRole(o)
	case Broad:
		if m.privileged {
			return "", false
		}
		return m.broadWebhook(o)
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
