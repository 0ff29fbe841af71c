package admission

import (
	"bytes"
	"encoding/json"
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
	// oldVersion is the object's resourceVersion before an update: the KCP
	// knows a read of the object that still shows it was made too early.
	// Empty for creates (nothing before) and deletes (the object goes).
	oldVersion string
	why        string
}

// decide applies the relevance rules: dry runs never; CREATE and DELETE always; UPDATE when
// spec changed, or status for the status subresource, or anything for an
// object without spec; CONNECT and other subresources never. Each object is
// parsed once.
func decide(manager string, req *request) verdict {
	if req.DryRun {
		// Nothing is stored: an event would make the KCP look for (and, with
		// a version, wait for) a write that never comes.
		return verdict{decision: metrics.DecisionIgnored, why: "dry run"}
	}
	switch req.Operation {
	case opConnect:
		return verdict{decision: metrics.DecisionIgnored, why: "CONNECT is not a change"}
	case opCreate:
		return queued(manager, req, parseObject(req.Object))
	case opDelete:
		if isAbsent(req.OldObject) {
			return queued(manager, req, parseObject(req.Object))
		}
		return queued(manager, req, parseObject(req.OldObject))
	case opUpdate:
		if req.SubResource != "" && req.SubResource != statusSubresource {
			return verdict{decision: metrics.DecisionIgnored, why: "subresource " + req.SubResource + " is not watched"}
		}
		oldObj, newObj := parseObject(req.OldObject), parseObject(req.Object)
		if why, changed := updateChanged(req, oldObj, newObj); !changed {
			return verdict{decision: metrics.DecisionUnchanged, why: why}
		}
		v := queued(manager, req, newObj)
		if oldObj != nil {
			v.oldVersion = oldObj.Metadata.ResourceVersion
		}
		return v
	default:
		return verdict{decision: metrics.DecisionMalformed, why: "unknown operation " + req.Operation}
	}
}

// updateChanged compares the watched part: status for the status
// subresource, else spec, else (objects without spec, like a ConfigMap)
// the whole object but for what the API server changes itself. Objects that
// cannot be read count as changed: the KCP reads the current state anyway.
func updateChanged(req *request, oldObj, newObj *objectParts) (string, bool) {
	if oldObj == nil || newObj == nil {
		return "", true
	}
	if req.SubResource == statusSubresource {
		return "status unchanged", !jsonEqual(oldObj.Status, newObj.Status)
	}
	switch hasOld, hasNew := !isAbsent(oldObj.Spec), !isAbsent(newObj.Spec); {
	case hasOld && hasNew:
		return "spec unchanged", !jsonEqual(oldObj.Spec, newObj.Spec)
	case hasOld != hasNew:
		return "", true
	default:
		return "object unchanged", !objectsEqual(req.OldObject, req.Object)
	}
}

// queued builds the key of the changed object: its kind from the request,
// its name from the object, or from the request when the object has none.
func queued(manager string, req *request, obj *objectParts) verdict {
	if req.Kind.Version == "" || req.Kind.Kind == "" {
		return verdict{decision: metrics.DecisionMalformed, why: "request has no kind"}
	}
	namespace, name := req.Namespace, req.Name
	if obj != nil && obj.Metadata.Name != "" {
		// A CREATE with generateName has its name only in the object.
		namespace, name = obj.Metadata.Namespace, obj.Metadata.Name
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
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec   json.RawMessage `json:"spec"`
	Status json.RawMessage `json:"status"`
}

// parseObject reads the parts the rules need; nil when there is no object
// or it does not parse.
func parseObject(raw json.RawMessage) *objectParts {
	if isAbsent(raw) {
		return nil
	}
	var o objectParts
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil
	}
	return &o
}

func isAbsent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// jsonEqual compares two encodings of a value. The API server encodes
// both objects of a review the same way (map keys sorted, struct fields in
// order), so equal values have equal bytes; compacting first makes
// whitespace irrelevant too. A value re-encoded with other key order would
// count as changed: one event too many, never one too few.
func jsonEqual(a, b json.RawMessage) bool {
	if isAbsent(a) || isAbsent(b) {
		return isAbsent(a) == isAbsent(b)
	}
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
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
