package manifest

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// moduleState is the state of the module CR: through the module's
// customStateCheck when it has one, else the CR's status.state.
func moduleState(cr *unstructured.Unstructured, checks []v1beta2.CustomStateCheck) (shared.State, string, error) {
	if len(checks) == 0 {
		return crState(cr)
	}
	state, msg := checkedState(cr, checks)
	return state, msg, nil
}

// checkStates are the states a customStateCheck may map to, worst first:
// when the checks of several states match, the worst one is the module's.
var checkStates = []shared.State{shared.StateError, shared.StateWarning, shared.StateDeleting, shared.StateProcessing, shared.StateReady}

// checkedState maps the module CR through its checks. The checks of one
// state all have to match for the module to be in it; when no state's
// checks match, the module is Processing. A check that cannot be evaluated
// (a bad path, a state no module reports, no way to become Ready) is the
// module's configuration error: Error, saying what is wrong, so that the
// Kyma shows it instead of a module that waits forever.
func checkedState(cr *unstructured.Unstructured, checks []v1beta2.CustomStateCheck) (shared.State, string) {
	name := describe(cr)
	if !slices.ContainsFunc(checks, func(c v1beta2.CustomStateCheck) bool { return c.MappedState == shared.StateReady }) {
		return shared.StateError, name + ": the module's customStateCheck maps no value to Ready, so it could never be Ready"
	}
	matched := map[shared.State]bool{}
	seen := map[shared.State][]string{}
	for _, c := range checks {
		if !slices.Contains(checkStates, c.MappedState) {
			return shared.StateError, fmt.Sprintf("%s: the module's customStateCheck maps %q to %q, which is not a state a module reports",
				name, c.Value, c.MappedState)
		}
		value, found, err := valueAt(cr.Object, c.JSONPath)
		if err != nil {
			return shared.StateError, name + ": the module's customStateCheck: " + err.Error()
		}
		ok := found && value == c.Value
		if prev, has := matched[c.MappedState]; has {
			ok = ok && prev
		}
		matched[c.MappedState] = ok
		seen[c.MappedState] = append(seen[c.MappedState], describeValue(c.JSONPath, value, found))
	}
	for _, s := range checkStates {
		if !matched[s] {
			continue
		}
		msg := fmt.Sprintf("%s reports %s (%s)", name, s, strings.Join(seen[s], ", "))
		if s == shared.StateReady {
			return s, msg
		}
		return s, msg + crConditionMessage(cr)
	}
	var all []string
	for _, s := range checkStates {
		all = append(all, seen[s]...)
	}
	slices.Sort(all)
	return shared.StateProcessing, fmt.Sprintf("%s matches none of the module's customStateCheck states yet (%s)",
		name, strings.Join(slices.Compact(all), ", "))
}

func describeValue(path, value string, found bool) string {
	if !found {
		return path + " is not set"
	}
	return fmt.Sprintf("%s is %q", path, value)
}

// valueAt reads the single value at path in obj, in kubectl's JSONPath
// syntax; the braces and the leading dot may be left out, as the public
// lifecycle manager's customStateCheck paths are written (status.health).
// A path that selects nothing reports found false; one that does not parse,
// selects several values or an object or list is an error.
// FuzzValueAt holds it to never panicking on a module author's path.
func valueAt(obj map[string]any, path string) (string, bool, error) {
	template, err := jsonPathTemplate(path)
	if err != nil {
		return "", false, err
	}
	jp := jsonpath.New("customStateCheck").AllowMissingKeys(true)
	if err := jp.Parse(template); err != nil {
		return "", false, fmt.Errorf("jsonPath %q does not parse: %w", path, err)
	}
	results, err := findResults(jp, obj)
	if err != nil {
		return "", false, fmt.Errorf("jsonPath %q: %w", path, err)
	}
	var values []reflect.Value
	for _, r := range results {
		values = append(values, r...)
	}
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
		return scalar(path, values[0])
	default:
		return "", false, fmt.Errorf("jsonPath %q selects %d values; a state check compares one", path, len(values))
	}
}

// findResults evaluates jp on obj. client-go's JSONPath panics on some
// paths that parse (a range over an empty filter, "{range }{[]}"): a module
// author's path then fails its module with an error, not the operator.
func findResults(jp *jsonpath.JSONPath, obj map[string]any) (results [][]reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			results, err = nil, fmt.Errorf("cannot be evaluated: %v", r)
		}
	}()
	return jp.FindResults(obj)
}

// jsonPathTemplate turns a path into a JSONPath template: {.a.b} as given,
// .a.b and a.b into {.a.b}.
func jsonPathTemplate(path string) (string, error) {
	p := strings.TrimSpace(path)
	switch {
	case p == "":
		return "", fmt.Errorf("jsonPath is empty")
	case strings.HasPrefix(p, "{"):
		return p, nil
	case strings.HasPrefix(p, ".") || strings.HasPrefix(p, "["):
		return "{" + p + "}", nil
	default:
		return "{." + p + "}", nil
	}
}

// scalar formats a selected value as its JSON text would read; null counts
// as not set.
func scalar(path string, v reflect.Value) (string, bool, error) {
	for v.IsValid() && v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", false, nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return "", false, nil
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), true, nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true, nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64), true, nil
	case reflect.Map, reflect.Slice:
		if v.IsNil() {
			return "", false, nil
		}
		return "", false, fmt.Errorf("jsonPath %q selects an object or a list, not a value", path)
	default:
		return "", false, fmt.Errorf("jsonPath %q selects a %s, not a value", path, v.Kind())
	}
}
