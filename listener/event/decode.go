package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// MaxFieldLength bounds every string of a body: the longest Kubernetes
// name (a DNS subdomain) is 253 characters.
const MaxFieldLength = 253

// ErrMalformed marks a body that is not JSON of the event's shape. Its
// message never quotes the body: callers may send it back as is.
var ErrMalformed = errors.New("body is not a JSON event")

// Payload is what an agent reports in the body of an event.
type Payload struct {
	Object types.NamespacedName
	GVK    schema.GroupVersionKind
	// OldResourceVersion is the optional "oldResourceVersion" field: see
	// Event.OldResourceVersion.
	OldResourceVersion string
}

// wireEvent is the runtime-watcher body. The object key carries no JSON
// tags there, so its fields arrive as "Namespace" and "Name"; encoding/json
// matches field names case-insensitively, which also accepts "name".
// Unknown fields, such as "owner" of contract v1, are ignored. A missing
// object is reported as its missing name. "oldResourceVersion" is ours:
// the public listener ignores it, the public agent does not send it.
type wireEvent struct {
	Watched struct {
		Namespace string
		Name      string
	} `json:"watched"`
	WatchedGVK struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"watchedGvk"`
	OldResourceVersion string `json:"oldResourceVersion"`
}

// Decode parses and checks an event body. Errors wrap ErrMalformed or name
// the missing or invalid field; they never contain the body.
func Decode(body []byte) (Payload, error) {
	var w wireEvent
	if err := json.Unmarshal(body, &w); err != nil {
		return Payload{}, ErrMalformed
	}
	p := Payload{
		Object: types.NamespacedName{Namespace: w.Watched.Namespace, Name: w.Watched.Name},
		GVK:    schema.GroupVersionKind{Group: w.WatchedGVK.Group, Version: w.WatchedGVK.Version, Kind: w.WatchedGVK.Kind},

		OldResourceVersion: w.OldResourceVersion,
	}
	return p, p.validate()
}

func (p *Payload) validate() error {
	fields := []struct {
		name     string
		value    string
		required bool
	}{
		{"watched.Name", p.Object.Name, true},
		{"watched.Namespace", p.Object.Namespace, false},
		{"watchedGvk.group", p.GVK.Group, false},
		{"watchedGvk.version", p.GVK.Version, true},
		{"watchedGvk.kind", p.GVK.Kind, true},
		{"oldResourceVersion", p.OldResourceVersion, false},
	}
	for _, f := range fields {
		switch {
		case f.value == "" && f.required:
			return fmt.Errorf("missing field %s", f.name)
		case len(f.value) > MaxFieldLength:
			return fmt.Errorf("field %s is longer than %d bytes", f.name, MaxFieldLength)
		case !printable(f.value):
			return fmt.Errorf("field %s holds control characters", f.name)
		}
	}
	return nil
}

// printable rejects control characters, which no Kubernetes name or kind
// contains and which would only end up in logs.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return false
		}
	}
	return true
}
