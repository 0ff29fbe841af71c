package event

import (
	"encoding/json"
	"fmt"
	"net/url"
	"unique"
)

// GVK is the group, version and kind of a watched object.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// KymaGVK is the kind of the Kyma that an overflow resync event names.
var KymaGVK = GVK{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"}

// Stream is one manager's events for one kind of object.
type Stream struct {
	Manager string
	GVK     GVK
}

// Key identifies the changes of one object for one manager: every change of
// the object queued under the same key is forwarded as one event. It is
// small and comparable: the stream is interned, because a queue holds up to
// hundreds of thousands of keys that share a handful of streams.
type Key struct {
	stream    unique.Handle[Stream]
	Namespace string
	Name      string
}

// NewKey returns the key of an object's changes for a manager.
func NewKey(manager string, gvk GVK, namespace, name string) Key {
	return Key{stream: unique.Make(Stream{Manager: manager, GVK: gvk}), Namespace: namespace, Name: name}
}

// Manager is the KCP manager that wants the event.
func (k Key) Manager() string { return k.stream.Value().Manager }

// GVK is the kind of the changed object.
func (k Key) GVK() GVK { return k.stream.Value().GVK }

// String is for logs; the zero Key (no object) is empty.
func (k Key) String() string {
	if k == (Key{}) {
		return ""
	}
	s := k.stream.Value()
	obj := k.Name
	if k.Namespace != "" {
		obj = k.Namespace + "/" + k.Name
	}
	return fmt.Sprintf("%s: %s.%s/%s %s", s.Manager, s.GVK.Kind, s.GVK.Group, s.GVK.Version, obj)
}

// objectKey has upper-case JSON names: the public listener decodes it into
// a Kubernetes NamespacedName, which has no JSON tags.
type objectKey struct {
	Namespace string `json:"Namespace"`
	Name      string `json:"Name"`
}

// Body is the JSON body of an event on the wire.
type Body struct {
	Watched    objectKey `json:"watched"`
	WatchedGVK GVK       `json:"watchedGvk"`
}

// Body returns the wire body of the key's event.
func (k Key) Body() Body {
	return Body{Watched: objectKey{Namespace: k.Namespace, Name: k.Name}, WatchedGVK: k.GVK()}
}

// MarshalBody encodes the key's event as the listener expects it.
func (k Key) MarshalBody() ([]byte, error) {
	b, err := json.Marshal(k.Body())
	if err != nil {
		return nil, fmt.Errorf("encoding event %s: %w", k, err)
	}
	return b, nil
}

// Path is the URL path that the listener serves the key's manager at:
// /<contract>/<manager>/event.
func (k Key) Path(contract string) string {
	return "/" + url.PathEscape(contract) + "/" + url.PathEscape(k.Manager()) + "/event"
}
