package event

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
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

// Body is the JSON body of an event on the wire. OldResourceVersion is
// ours: the public listener ignores fields it does not know.
type Body struct {
	Watched            objectKey `json:"watched"`
	WatchedGVK         GVK       `json:"watchedGvk"`
	OldResourceVersion string    `json:"oldResourceVersion,omitempty"`
}

// Body returns the wire body of the key's event, as the public agent sends it.
func (k Key) Body() Body {
	return Body{Watched: objectKey{Namespace: k.Namespace, Name: k.Name}, WatchedGVK: k.GVK()}
}

// Event is one event as sent: the changed object and, when known, its
// resourceVersion before the change.
//
// Why the version: the agent is a validating webhook, called before the
// runtime's API server stores the write it reports. A KCP reader that
// still sees this version knows that it read too early and reads again,
// instead of waiting a fixed time for a second look.
type Event struct {
	Key
	OldResourceVersion string
}

// Body returns the wire body of the event.
func (e Event) Body() Body {
	b := e.Key.Body()
	b.OldResourceVersion = e.OldResourceVersion
	return b
}

// MarshalBody encodes the event as the listener expects it.
func (e Event) MarshalBody() ([]byte, error) {
	b, err := json.Marshal(e.Body())
	if err != nil {
		return nil, fmt.Errorf("encoding event %s: %w", e.Key, err)
	}
	return b, nil
}

// NewerVersion is the version an event that covers two changes of one
// object waits for: the newer one, or none when either change has none
// (a create or a delete, or a change from an agent that sends none), since
// then no version tells which read is recent enough. Resource versions are
// opaque, but those of an API server backed by etcd are increasing
// numbers; when one is not a number, the later (b) wins.
func NewerVersion(a, b string) string {
	if a == "" || b == "" {
		return ""
	}
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil && x > y {
		return a
	}
	return b
}

// Path is the URL path that the listener serves the key's manager at:
// /<contract>/<manager>/event.
func (k Key) Path(contract string) string {
	return "/" + url.PathEscape(contract) + "/" + url.PathEscape(k.Manager()) + "/event"
}
