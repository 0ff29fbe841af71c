package promtest

import (
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"
)

// RulesFile turns the spec of a PrometheusRule (as rendered, unstructured)
// into a Prometheus rules file: the Prometheus Operator writes the same
// groups for its Prometheus.
func RulesFile(spec map[string]any) ([]byte, error) {
	groups, ok := spec["groups"].([]any)
	if !ok || len(groups) == 0 {
		return nil, errors.New("the PrometheusRule has no spec.groups")
	}
	out, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		return nil, fmt.Errorf("encoding the rule groups: %w", err)
	}
	return out, nil
}

// Alerts returns the alert names of a PrometheusRule's spec, in order.
func Alerts(spec map[string]any) []string {
	var names []string
	groups, _ := spec["groups"].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		rules, _ := gm["rules"].([]any)
		for _, r := range rules {
			if name, ok := r.(map[string]any)["alert"].(string); ok {
				names = append(names, name)
			}
		}
	}
	return names
}
