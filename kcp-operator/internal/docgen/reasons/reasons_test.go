package reasons_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/docgen/reasons"
)

func TestEventsAreTracedToTheirConstants(t *testing.T) {
	p, err := reasons.Load(".", "./testdata/sample")
	require.NoError(t, err)
	events, unresolved := p.Events()
	const pkg = "testdata/sample"
	assert.Equal(t, []reasons.Event{
		{Object: "Pod", Type: "Normal", Reason: "FromClosure", Action: "Closure", Package: pkg},
		{Object: "Pod", Type: "Normal", Reason: "HelperNormal", Action: "Helper", Package: pkg},
		{Object: "Pod", Type: "Warning", Reason: "HelperWarning", Action: "Helper", Package: pkg},
		{Object: "Pod", Type: "Normal", Reason: "Literal", Action: "Do", Package: pkg},
		{Object: "Pod", Type: "Warning", Reason: "Named", Action: "Do", Package: pkg},
		{Object: "Pod", Type: "Normal", Reason: "State<State>", Action: "Reconcile", Package: pkg},
	}, events, "the forwarding Eventf of Bounded is no Event of its own")
	require.Len(t, unresolved, 1)
	assert.Contains(t, unresolved[0].String(), "testdata/sample/sample.go:")
	assert.Contains(t, unresolved[0].String(), "reason is not a constant: the result of fmt.Sprintf")
}

func TestConditionsKeepTheirTypeReasonAndStatusTogether(t *testing.T) {
	p, err := reasons.Load(".", "./testdata/sample")
	require.NoError(t, err)
	conditions, unresolved := p.Conditions()
	assert.Empty(t, unresolved)
	const pkg = "testdata/sample"
	assert.Equal(t, []reasons.Condition{
		{Type: "Direct", Status: "Unknown", Reason: "Named", Package: pkg},
		{Type: "Installed", Status: "False", Reason: "NotInstalled", Package: pkg},
		{Type: "Ready", Status: "True", Reason: "AllReady", Package: pkg},
		{Type: "Thing", Status: "False", Reason: "Fallback", Package: pkg},
		{Type: "Thing", Status: "False", Reason: "FieldOne", Package: pkg},
		{Type: "Thing", Status: "False", Reason: "FieldTwo", Package: pkg},
		{Type: "Thing", Status: "True", Reason: "Fine", Package: pkg},
	}, conditions, "no Ready/NotInstalled or Thing/True/FieldOne: values stay with their call site and branch")
}
