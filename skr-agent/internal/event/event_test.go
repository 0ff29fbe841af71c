package event_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/event"
)

func TestBodyIsTheRuntimeWatcherWireFormat(t *testing.T) {
	k := event.NewKey("lifecycle-manager", event.KymaGVK, "kyma-system", "default")
	b, err := event.Event{Key: k}.MarshalBody()
	require.NoError(t, err)
	assert.JSONEq(t, `{"watched":{"Namespace":"kyma-system","Name":"default"},`+
		`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`, string(b),
		"without a version, exactly the public agent's body")

	b, err = event.Event{Key: k, OldResourceVersion: "4711"}.MarshalBody()
	require.NoError(t, err)
	assert.JSONEq(t, `{"watched":{"Namespace":"kyma-system","Name":"default"},`+
		`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"},"oldResourceVersion":"4711"}`, string(b))
}

func TestNewerVersion(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"17", "12", "17"},
		{"12", "17", "17"},
		{"", "17", ""},
		{"17", "", ""},
		{"x", "y", "y"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, event.NewerVersion(tc.a, tc.b), "%q, %q", tc.a, tc.b)
	}
}

func TestPath(t *testing.T) {
	k := event.NewKey("lifecycle-manager", event.GVK{Version: "v1", Kind: "ConfigMap"}, "", "cm")
	assert.Equal(t, "/v2/lifecycle-manager/event", k.Path("v2"))
}

func TestKeysOfTheSameObjectAndManagerAreEqual(t *testing.T) {
	gvk := event.GVK{Group: "g", Version: "v", Kind: "K"}
	a := event.NewKey("m", gvk, "ns", "n")
	b := event.NewKey("m", gvk, "ns", "n")
	assert.Equal(t, a, b)
	m := map[event.Key]int{a: 1}
	m[b]++
	assert.Len(t, m, 1)

	for _, other := range []event.Key{
		event.NewKey("other", gvk, "ns", "n"),
		event.NewKey("m", event.GVK{Group: "g", Version: "v2", Kind: "K"}, "ns", "n"),
		event.NewKey("m", gvk, "ns2", "n"),
		event.NewKey("m", gvk, "ns", "n2"),
	} {
		assert.NotEqual(t, a, other, other.String())
	}
	assert.Equal(t, "m", a.Manager())
	assert.Equal(t, gvk, a.GVK())
}

func TestBodyRoundTrip(t *testing.T) {
	k := event.NewKey("m", event.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}, "ns", "d")
	ev := event.Event{Key: k, OldResourceVersion: "9"}
	b, err := ev.MarshalBody()
	require.NoError(t, err)
	var got event.Body
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, ev.Body(), got)
}

func TestTheZeroKeyPrintsEmpty(t *testing.T) {
	assert.Empty(t, event.Key{}.String(), "requests that queue nothing log it without panicking")
	k := event.NewKey("lifecycle-manager", event.GVK{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"}, "kyma-system", "default")
	assert.Equal(t, "lifecycle-manager: Kyma.operator.kyma-project.io/v1beta2 kyma-system/default", k.String())
}
