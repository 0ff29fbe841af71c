package shared_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lifecycle-manager/api/shared"
)

func TestIsEnabled(t *testing.T) {
	tests := []struct {
		value string
		set   bool
		want  bool
	}{
		{"true", true, true},
		{"TRUE", true, true},
		{"True", true, true},
		{"false", true, false},
		{"yes", true, false},
		{"", true, false},
		{"truex", true, false},
		{"", false, false},
	}
	for _, tc := range tests {
		labels := map[string]string{}
		if tc.set {
			labels[shared.BetaLabel] = tc.value
		}
		assert.Equal(t, tc.want, shared.IsEnabled(labels, shared.BetaLabel), "value %q set=%v", tc.value, tc.set)
	}
	assert.False(t, shared.IsEnabled(nil, shared.BetaLabel))
}

func TestWorst(t *testing.T) {
	tests := []struct {
		name   string
		states []shared.State
		want   shared.State
	}{
		{"none is ready", nil, shared.StateReady},
		{"all ready", []shared.State{shared.StateReady, shared.StateReady}, shared.StateReady},
		{"unmanaged does not count", []shared.State{shared.StateUnmanaged, shared.StateReady}, shared.StateReady},
		{"processing beats ready", []shared.State{shared.StateReady, shared.StateProcessing}, shared.StateProcessing},
		{"empty is processing", []shared.State{shared.StateReady, ""}, shared.StateProcessing},
		{"warning beats processing", []shared.State{shared.StateProcessing, shared.StateWarning}, shared.StateWarning},
		{"deleting beats warning", []shared.State{shared.StateWarning, shared.StateDeleting}, shared.StateDeleting},
		{"error beats all", []shared.State{shared.StateError, shared.StateDeleting, shared.StateWarning}, shared.StateError},
		{"unknown counts as error", []shared.State{shared.StateWarning, "Exploded"}, "Exploded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, shared.Worst(tc.states...))
		})
	}
}

func TestIsKnown(t *testing.T) {
	for _, s := range []shared.State{shared.StateReady, shared.StateProcessing, shared.StateWarning,
		shared.StateError, shared.StateDeleting, shared.StateUnmanaged} {
		assert.True(t, s.IsKnown(), s)
	}
	assert.False(t, shared.State("Exploded").IsKnown())
	assert.False(t, shared.State("").IsKnown())
}
