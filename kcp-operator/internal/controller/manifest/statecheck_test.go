package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func statusObject() map[string]any {
	return map[string]any{
		"status": map[string]any{
			"health":     "green",
			"replicas":   int64(3),
			"ratio":      0.5,
			"ok":         true,
			"nothing":    nil,
			"module":     map[string]any{"state": map[string]any{"field1": "value1"}},
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "False"}},
		},
	}
}

func TestValueAt(t *testing.T) {
	tests := []struct {
		name, path string
		want       string
		found      bool
		wantErr    string
	}{
		{"public form without dot", "status.health", "green", true, ""},
		{"leading dot", ".status.health", "green", true, ""},
		{"braces", "{.status.health}", "green", true, ""},
		{"surrounding space", "  status.health ", "green", true, ""},
		{"nested", "status.module.state.field1", "value1", true, ""},
		{"integer", "status.replicas", "3", true, ""},
		{"float", "status.ratio", "0.5", true, ""},
		{"bool", "status.ok", "true", true, ""},
		{"filter", `status.conditions[?(@.type=="Ready")].status`, "True", true, ""},
		{"index", "status.conditions[1].type", "Synced", true, ""},
		{"missing field", "status.state", "", false, ""},
		{"missing parent", "spec.nothing.here", "", false, ""},
		{"null", "status.nothing", "", false, ""},
		{"filter matching nothing", `status.conditions[?(@.type=="Gone")].status`, "", false, ""},
		{"empty", " ", "", false, "jsonPath is empty"},
		{"does not parse", "status.[health", "", false, `jsonPath "status.[health" does not parse`},
		{"unclosed brace", "{.status.health", "", false, "does not parse"},
		{"a range JSONPath panics on", "$range }{[]00", "", false, `jsonPath "$range }{[]00": cannot be evaluated`},
		{"several values", "status.conditions[*].type", "", false, "selects 2 values; a state check compares one"},
		{"an object", "status.module", "", false, "selects an object or a list, not a value"},
		{"a list", "status.conditions", "", false, "selects an object or a list, not a value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := valueAt(statusObject(), tc.path)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.found, found)
			assert.Equal(t, tc.want, got)
		})
	}
}

func check(path, value string, state shared.State) v1beta2.CustomStateCheck {
	return v1beta2.CustomStateCheck{JSONPath: path, Value: value, MappedState: state}
}

func TestCheckedState(t *testing.T) {
	health := []v1beta2.CustomStateCheck{
		check("status.health", "green", shared.StateReady),
		check("status.health", "red", shared.StateError),
		check("status.health", "yellow", shared.StateWarning),
	}
	twoForReady := []v1beta2.CustomStateCheck{
		check("status.a", "1", shared.StateReady),
		check("status.b", "2", shared.StateReady),
		check("status.a", "x", shared.StateError),
	}
	tests := []struct {
		name    string
		status  map[string]any
		checks  []v1beta2.CustomStateCheck
		want    shared.State
		wantMsg string
	}{
		{"ready value", map[string]any{"health": "green"}, health, shared.StateReady, `reports Ready (status.health is "green")`},
		{"error value", map[string]any{"health": "red"}, health, shared.StateError, `reports Error (status.health is "red")`},
		{"warning value, with the CR's reason", map[string]any{"health": "yellow", "conditions": []any{
			map[string]any{"type": "Quota", "status": "False", "message": "quota exceeded"}}},
			health, shared.StateWarning, "reports Warning (status.health is \"yellow\"): quota exceeded"},
		{"an unmapped value", map[string]any{"health": "blue"}, health, shared.StateProcessing,
			`matches none of the module's customStateCheck states yet (status.health is "blue")`},
		{"no value yet", nil, health, shared.StateProcessing, "status.health is not set"},
		{"status.state does not count", map[string]any{"state": "Ready"}, health, shared.StateProcessing, "status.health is not set"},
		{"every Ready check must match", map[string]any{"a": "1", "b": "3"}, twoForReady, shared.StateProcessing, `status.b is "3"`},
		{"all Ready checks match", map[string]any{"a": "1", "b": "2"}, twoForReady, shared.StateReady, `status.a is "1", status.b is "2"`},
		{"the worst matching state wins", map[string]any{"a": "x", "b": "2"}, append(twoForReady, check("status.b", "2", shared.StateReady)),
			shared.StateError, `status.a is "x"`},
		{"no Ready mapping", map[string]any{"health": "red"}, health[1:], shared.StateError, "maps no value to Ready, so it could never be Ready"},
		{"a state modules do not report", map[string]any{"health": "green"},
			append(health, check("status.health", "gone", shared.StateUnmanaged)), shared.StateError, `maps "gone" to "Unmanaged"`},
		{"a bad path", map[string]any{"health": "green"}, []v1beta2.CustomStateCheck{check("status[", "green", shared.StateReady)},
			shared.StateError, `customStateCheck: jsonPath "status[" does not parse`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := checkedState(moduleCR(tc.status), tc.checks)
			assert.Equal(t, tc.want, got)
			assert.Contains(t, msg, tc.wantMsg)
			assert.Contains(t, msg, "Sample kyma-system/default")
		})
	}
}

func TestModuleStateWithoutChecksIsStatusState(t *testing.T) {
	state, msg, err := moduleState(moduleCR(map[string]any{"state": "Ready", "health": "red"}), nil)
	require.NoError(t, err)
	assert.Equal(t, shared.StateReady, state)
	assert.Contains(t, msg, "is Ready")
}

// FuzzValueAt feeds arbitrary paths, the module author's input, to the
// reader: it must never panic, and it reports either an error, nothing, or
// one value.
func FuzzValueAt(f *testing.F) {
	for _, s := range []string{"status.health", "{.status.health}", `status.conditions[?(@.type=="Ready")].status`,
		"status.conditions[*].type", "{range .status.conditions[*]}{.type}{end}", "status.[", "{..health}", "status.conditions[-1:]", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		value, found, err := valueAt(statusObject(), path)
		if err != nil && (found || value != "") {
			t.Fatalf("an error with a value: %q %v %v", value, found, err)
		}
		if !found && value != "" {
			t.Fatalf("a value not found: %q", value)
		}
	})
}
