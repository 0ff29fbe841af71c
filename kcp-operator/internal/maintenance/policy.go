package maintenance

import (
	"errors"
	"fmt"
	"regexp"
	"time"
	_ "time/tzdata" // the operator's image has no zone database: IANA zones come with the binary

	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
)

// Policy maps runtimes to maintenance windows. Parse makes one; the zero
// value is not usable.
type Policy struct {
	rules []rule
	def   window
}

type rule struct {
	name    string
	match   []matcher
	windows []window
}

// matcher tests the value of one Kyma label against a pattern.
type matcher struct {
	label   string
	pattern *regexp.Regexp
}

// policyDoc, ruleDoc, matchDoc and windowDoc are the file's format (see the
// package documentation).
type policyDoc struct {
	TimeZone string     `json:"timeZone,omitempty"`
	Rules    []ruleDoc  `json:"rules,omitempty"`
	Default  *windowDoc `json:"default"`
}

type ruleDoc struct {
	Name    string      `json:"name,omitempty"`
	Match   matchDoc    `json:"match"`
	Windows []windowDoc `json:"windows"`
}

type matchDoc struct {
	Region          string `json:"region,omitempty"`
	PlatformRegion  string `json:"platformRegion,omitempty"`
	Plan            string `json:"plan,omitempty"`
	GlobalAccountID string `json:"globalAccountID,omitempty"`
}

type windowDoc struct {
	Days     []string `json:"days,omitempty"`
	Begin    string   `json:"begin"`
	End      string   `json:"end"`
	TimeZone string   `json:"timeZone,omitempty"`
}

// Parse reads a policy from YAML or JSON. Every problem is reported, each
// naming where it is (rules[1].windows[0].end: ...).
func Parse(data []byte) (*Policy, error) {
	var doc policyDoc
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	var errs []error
	zone := time.UTC
	if doc.TimeZone != "" {
		loc, err := time.LoadLocation(doc.TimeZone)
		if err != nil {
			errs = append(errs, fmt.Errorf("timeZone: %w", err))
		} else {
			zone = loc
		}
	}
	p := &Policy{}
	if doc.Default == nil {
		errs = append(errs, errors.New("default: missing; a policy needs a default window for the runtimes no rule selects"))
	} else {
		var err error
		if p.def, err = compileWindow(*doc.Default, zone); err != nil {
			errs = append(errs, fmt.Errorf("default: %w", err))
		}
	}
	for i, rd := range doc.Rules {
		r, err := compileRule(rd, zone)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ruleName(i, rd.Name), err))
			continue
		}
		p.rules = append(p.rules, r)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

func compileRule(rd ruleDoc, zone *time.Location) (rule, error) {
	r := rule{name: rd.Name}
	var errs []error
	for _, m := range []struct{ field, label, pattern string }{
		{"region", shared.RegionLabel, rd.Match.Region},
		{"platformRegion", shared.PlatformRegionLabel, rd.Match.PlatformRegion},
		{"plan", shared.PlanLabel, rd.Match.Plan},
		{"globalAccountID", shared.GlobalAccountIDLabel, rd.Match.GlobalAccountID},
	} {
		if m.pattern == "" {
			continue
		}
		// Unanchored, as the public policies are written: "eu-" selects
		// every region that contains it; "^trial$" only the plan trial.
		re, err := regexp.Compile(m.pattern)
		if err != nil {
			errs = append(errs, fmt.Errorf("match.%s: %q is not a regular expression: %w", m.field, m.pattern, err))
			continue
		}
		r.match = append(r.match, matcher{label: m.label, pattern: re})
	}
	if len(r.match) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("match: names none of region, platformRegion, plan, globalAccountID; the default window is the one for every runtime"))
	}
	if len(rd.Windows) == 0 {
		errs = append(errs, errors.New("windows: none; a rule without windows would send its runtimes to the default"))
	}
	for i, wd := range rd.Windows {
		w, err := compileWindow(wd, zone)
		if err != nil {
			errs = append(errs, fmt.Errorf("windows[%d]: %w", i, err))
			continue
		}
		r.windows = append(r.windows, w)
	}
	return r, errors.Join(errs...)
}

// selects reports whether any pattern of r matches its label on labels,
// as the public policies' rules select: each names another way to pick
// runtimes. A label that is missing or empty is matched by no pattern.
func (r rule) selects(labels map[string]string) bool {
	for _, m := range r.match {
		if v := labels[m.label]; v != "" && m.pattern.MatchString(v) {
			return true
		}
	}
	return false
}

// ruleName names rule i in messages: by its place, and by its name if it
// has one.
func ruleName(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("rules[%d]", i)
	}
	return fmt.Sprintf("rules[%d] (%s)", i, name)
}

// windowsFor returns the windows that apply to a runtime with labels, and
// the name of the rule that gave them ("" for the default).
func (p *Policy) windowsFor(labels map[string]string) ([]window, string) {
	for i, r := range p.rules {
		if r.selects(labels) {
			name := r.name
			if name == "" {
				name = fmt.Sprintf("rules[%d]", i)
			}
			return r.windows, name
		}
	}
	return nil, ""
}
