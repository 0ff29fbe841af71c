package event_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/listener/event"
)

const validBody = `{"owner":{"Namespace":"kcp-system","Name":"kyma-1"},` +
	`"watched":{"Namespace":"kyma-system","Name":"default"},` +
	`"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`

func TestDecode(t *testing.T) {
	long := strings.Repeat("a", event.MaxFieldLength+1)
	tests := []struct {
		name    string
		body    string
		want    event.Payload
		wantErr string
	}{
		{
			name: "runtime-watcher body with the v1 owner field",
			body: validBody,
			want: event.Payload{
				Object: types.NamespacedName{Namespace: "kyma-system", Name: "default"},
				GVK:    schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"},
			},
		},
		{
			name: "cluster-scoped object of the core group, lower-case keys",
			body: `{"watched":{"name":"node-1"},"watchedGvk":{"version":"v1","kind":"Node"}}`,
			want: event.Payload{Object: types.NamespacedName{Name: "node-1"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Node"}},
		},
		{
			name: "our agent's body with the pre-write version",
			body: `{"watched":{"Namespace":"kyma-system","Name":"default"},"watchedGvk":{"version":"v1","kind":"ConfigMap"},"oldResourceVersion":"4711"}`,
			want: event.Payload{
				Object: types.NamespacedName{Namespace: "kyma-system", Name: "default"},
				GVK:    schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, OldResourceVersion: "4711",
			},
		},
		{name: "version not a string", body: `{"watched":{"Name":"a"},"watchedGvk":{"version":"v1","kind":"K"},"oldResourceVersion":7}`, wantErr: "not a JSON event"},
		{name: "version with control characters", body: `{"watched":{"Name":"a"},"watchedGvk":{"version":"v1","kind":"K"},"oldResourceVersion":"1\n2"}`, wantErr: "oldResourceVersion holds control characters"},
		{name: "not JSON", body: `hello`, wantErr: "not a JSON event"},
		{name: "empty", body: ``, wantErr: "not a JSON event"},
		{name: "array", body: `[1]`, wantErr: "not a JSON event"},
		{name: "trailing data", body: validBody + `{}`, wantErr: "not a JSON event"},
		{name: "wrong type", body: `{"watched":{"Name":7},"watchedGvk":{"version":"v1","kind":"Node"}}`, wantErr: "not a JSON event"},
		{name: "no watched", body: `{"watchedGvk":{"version":"v1","kind":"Node"}}`, wantErr: "missing field watched.Name"},
		{name: "null watched", body: `{"watched":null,"watchedGvk":{"version":"v1","kind":"Node"}}`, wantErr: "missing field watched.Name"},
		{name: "no gvk", body: `{"watched":{"Name":"a"}}`, wantErr: "missing field watchedGvk.version"},
		{name: "no name", body: `{"watched":{"Namespace":"a"},"watchedGvk":{"version":"v1","kind":"Node"}}`, wantErr: "missing field watched.Name"},
		{name: "no version", body: `{"watched":{"Name":"a"},"watchedGvk":{"kind":"Node"}}`, wantErr: "missing field watchedGvk.version"},
		{name: "no kind", body: `{"watched":{"Name":"a"},"watchedGvk":{"version":"v1"}}`, wantErr: "missing field watchedGvk.kind"},
		{name: "name too long", body: `{"watched":{"Name":"` + long + `"},"watchedGvk":{"version":"v1","kind":"Node"}}`, wantErr: "watched.Name is longer"},
		{name: "control character", body: `{"watched":{"Name":"a\nb"},"watchedGvk":{"version":"v1","kind":"Node"}}`, wantErr: "control characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := event.Decode([]byte(tc.body))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				if tc.body != "" {
					assert.NotContains(t, err.Error(), tc.body, "errors must not echo the body")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzDecode checks that no body makes the decoder panic, that accepted
// bodies satisfy the rules, and that re-encoding an accepted payload decodes
// to the same payload.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(validBody))
	f.Add([]byte(`{"watched":{"name":"x"},"watchedGvk":{"version":"v1","kind":"K"}}`))
	f.Add([]byte(`{"watched":null}`))
	f.Add([]byte(`{"watched":{"name":"x"},"watchedGvk":{"version":"v1","kind":"K"},"oldResourceVersion":"12"}`))
	f.Add([]byte(`{"watched":{"Name":"\u0000"},"watchedGvk":{"version":"v1","kind":"K"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := event.Decode(body)
		if err != nil {
			if len(body) > 8 && strings.Contains(err.Error(), string(body)) {
				t.Fatalf("error %q echoes the body", err)
			}
			return
		}
		if p.Object.Name == "" || p.GVK.Version == "" || p.GVK.Kind == "" {
			t.Fatalf("accepted a payload without required fields: %+v", p)
		}
		again, err := event.Decode(encode(t, p))
		if err != nil {
			t.Fatalf("re-encoded payload %+v rejected: %v", p, err)
		}
		if again != p {
			t.Fatalf("round trip changed the payload: %+v != %+v", again, p)
		}
	})
}

func encode(t *testing.T, p event.Payload) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"watched":    map[string]string{"Namespace": p.Object.Namespace, "Name": p.Object.Name},
		"watchedGvk": map[string]string{"group": p.GVK.Group, "version": p.GVK.Version, "kind": p.GVK.Kind},

		"oldResourceVersion": p.OldResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestMergeKeepsTheVersionToWaitFor(t *testing.T) {
	tests := []struct {
		name, first, later, want string
	}{
		{"both versioned: the newer", "17", "12", "17"},
		{"both versioned, later newer", "12", "17", "17"},
		{"the first without a version", "", "17", ""},
		{"the later without a version", "17", "", ""},
		{"not numbers: the later", "a", "b", "b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := event.Event{Contract: "v1", OldResourceVersion: tc.first}
			ev.Merge(&event.Event{Contract: "v2", OldResourceVersion: tc.later})
			assert.Equal(t, tc.want, ev.OldResourceVersion)
			assert.Equal(t, "v2", ev.Contract, "the later contract wins")
		})
	}
}
