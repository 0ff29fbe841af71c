package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/lifecycle-manager/skr-agent/internal/event"
	"github.com/lifecycle-manager/skr-agent/internal/metrics"
)

const statusSubresource = "status"

// verdict is what to do with a request: its decision, the key to queue
// when the decision is metrics.DecisionQueued, and why, for the log.
type verdict struct {
	decision string
	key      event.Key
	why      string
}

// decide applies the relevance rules: CREATE and DELETE always; UPDATE when
// spec changed, or status for the status subresource, or anything for an
// object without spec; CONNECT and other subresources never.
func decide(manager string, req *request) verdict {
	switch req.Operation {
	case opConnect:
		return verdict{decision: metrics.DecisionIgnored, why: "CONNECT is not a change"}
	case opCreate:
		return queued(manager, req, req.Object)
	case opDelete:
		obj := req.OldObject
		if isAbsent(obj) {
			obj = req.Object
		}
		return queued(manager, req, obj)
	case opUpdate:
		switch req.SubResource {
		case "":
			if !specChanged(req.OldObject, req.Object) {
				return verdict{decision: metrics.DecisionUnchanged, why: "spec unchanged"}
			}
		case statusSubresource:
			if !partChanged(req.OldObject, req.Object, func(o *objectParts) json.RawMessage { return o.Status }) {
				return verdict{decision: metrics.DecisionUnchanged, why: "status unchanged"}
			}
		default:
			return verdict{decision: metrics.DecisionIgnored, why: "subresource " + req.SubResource + " is not watched"}
		}
		return queued(manager, req, req.Object)
	default:
		return verdict{decision: metrics.DecisionMalformed, why: "unknown operation " + req.Operation}
	}
}

// queued builds the key of the changed object: its kind from the request,
// its name from the object, or from the request when the object has none.
func queued(manager string, req *request, obj json.RawMessage) verdict {
	if req.Kind.Version == "" || req.Kind.Kind == "" {
		return verdict{decision: metrics.DecisionMalformed, why: "request has no kind"}
	}
	namespace, name := req.Namespace, req.Name
	if o, err := parseObject(obj); err == nil && o.Metadata.Name != "" {
		// A CREATE with generateName has its name only in the object.
		namespace, name = o.Metadata.Namespace, o.Metadata.Name
	}
	if name == "" {
		return verdict{decision: metrics.DecisionMalformed, why: "neither object nor request has a name"}
	}
	gvk := event.GVK{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	return verdict{decision: metrics.DecisionQueued, key: event.NewKey(manager, gvk, namespace, name)}
}

// objectParts is the part of a watched object the rules look at.
type objectParts struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec   json.RawMessage `json:"spec"`
	Status json.RawMessage `json:"status"`
}

var errNoObject = errors.New("no object")

func parseObject(raw json.RawMessage) (*objectParts, error) {
	if isAbsent(raw) {
		return nil, errNoObject
	}
	var o objectParts
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err // callers only test for failure
	}
	return &o, nil
}

// specChanged compares spec; for objects without spec (a ConfigMap), any
// change but the ones the API server makes itself counts.
func specChanged(oldRaw, newRaw json.RawMessage) bool {
	oldObj, errOld := parseObject(oldRaw)
	newObj, errNew := parseObject(newRaw)
	if errOld != nil || errNew != nil {
		return true // cannot tell: forward, the KCP reads the current state anyway
	}
	switch hasOld, hasNew := !isAbsent(oldObj.Spec), !isAbsent(newObj.Spec); {
	case hasOld && hasNew:
		return !jsonEqual(oldObj.Spec, newObj.Spec)
	case hasOld != hasNew:
		return true
	default:
		return !objectsEqual(oldRaw, newRaw)
	}
}

func partChanged(oldRaw, newRaw json.RawMessage, part func(*objectParts) json.RawMessage) bool {
	oldObj, errOld := parseObject(oldRaw)
	newObj, errNew := parseObject(newRaw)
	if errOld != nil || errNew != nil {
		return true
	}
	return !jsonEqual(part(oldObj), part(newObj))
}

func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// jsonEqual compares two JSON values by meaning: key order and spacing do
// not matter, numbers compare by their text.
func jsonEqual(a, b json.RawMessage) bool {
	if isAbsent(a) || isAbsent(b) {
		return isAbsent(a) == isAbsent(b)
	}
	if bytes.Equal(a, b) {
		return true // the API server encodes both the same way: the usual case
	}
	va, errA := decodeAny(a)
	vb, errB := decodeAny(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

// objectsEqual compares whole objects, leaving out the metadata the API
// server changes on every write.
func objectsEqual(a, b json.RawMessage) bool {
	va, errA := decodeAny(a)
	vb, errB := decodeAny(b)
	if errA != nil || errB != nil {
		return false
	}
	for _, v := range []any{va, vb} {
		if obj, ok := v.(map[string]any); ok {
			if meta, ok := obj["metadata"].(map[string]any); ok {
				delete(meta, "resourceVersion")
				delete(meta, "managedFields")
			}
		}
	}
	return reflect.DeepEqual(va, vb)
}

func decodeAny(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err // callers only test for failure
	}
	return v, nil
}
