package signature_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

func TestCanonicalFormIsTheSameForEqualDocuments(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"key order and space", `{"b": 1, "a": {"y": [1, 2], "x": "s"}}`, `{"a":{"x":"s","y":[1,2]},"b":1}`, true},
		{"YAML and JSON", "meta: {schemaVersion: v2}\ncomponent:\n  name: a.io/b\n  size: 12\n", `{"component":{"name":"a.io/b","size":12},"meta":{"schemaVersion":"v2"}}`, true},
		{"numbers by value", `{"a": 1.0, "b": 1e2, "c": -0}`, `{"a": 1, "b": 100, "c": 0}`, true},
		{"null members", `{"a": null, "b": [null]}`, `{"b": [null]}`, true},
		{"signatures are not signed", `{"a": 1, "signatures": [{"name": "x"}]}`, `{"a": 1}`, true},
		{"HTML characters", `{"a": "<b>&"}`, `{"a": "\u003cb\u003e\u0026"}`, true},
		{"another value", `{"a": 1}`, `{"a": 2}`, false},
		{"array order matters", `{"a": [1, 2]}`, `{"a": [2, 1]}`, false},
		{"nested signatures are content", `{"a": {"signatures": 1}}`, `{"a": {}}`, false},
		{"a string is not a number", `{"a": "1"}`, `{"a": 1}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := signature.Canonical([]byte(tc.a))
			require.NoError(t, err)
			b, err := signature.Canonical([]byte(tc.b))
			require.NoError(t, err)
			if tc.same {
				assert.Equal(t, string(a), string(b))
			} else {
				assert.NotEqual(t, string(a), string(b))
			}
		})
	}
}

func TestCanonicalForm(t *testing.T) {
	c, err := signature.Canonical([]byte(`{ "z": "<é>", "a": [true, false, null, 1.5, {"k": "v"}] }`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":[true,false,null,1.5,{"k":"v"}],"z":"<é>"}`, string(c))

	for _, bad := range []string{"", "[1, 2]", "{[", `"text"`} {
		_, err := signature.Canonical([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestObjectDigestIgnoresRepresentation(t *testing.T) {
	a, err := signature.ObjectDigest(map[string]any{"spec": map[string]any{"replicas": int64(1)}, "kind": "Sample"})
	require.NoError(t, err)
	b, err := signature.ObjectDigest(map[string]any{"kind": "Sample", "spec": map[string]any{"replicas": 1.0}, "status": nil})
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Regexp(t, `^sha256:[a-f0-9]{64}$`, a)
}
