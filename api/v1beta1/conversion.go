package v1beta1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
)

// What one version has no field for travels in an annotation, as JSON in
// the shape of the version that has the fields:
//
//   - V1beta1SpecAnnotation on a v1beta2 object: the spec fields only
//     v1beta1 has (Kyma spec.sync, ModuleTemplate spec.target).
//   - V1beta2SpecAnnotation on a v1beta1 object: the v1beta2 spec fields
//     v1beta1 has none for. They are found by JSON name, not listed, so a
//     field v1beta2 gains later travels too.
//
// The spec of the version written always wins: an annotation only adds
// what that version cannot say, and the conversion that reads it removes
// it. An annotation that does not decode is left where it is, an ordinary
// annotation: never dropped, and never an error, which would make the
// object unreadable in the other version (a list of all Kymas included).
const (
	V1beta1SpecAnnotation = shared.OperatorGroup + "/v1beta1-spec"
	V1beta2SpecAnnotation = shared.OperatorGroup + "/v1beta2-spec"
)

// fields are the JSON fields of an object, by name.
type fields = map[string]json.RawMessage

// remainder returns the JSON fields of v that known does not name.
func remainder(v any, known ...string) (fields, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	var f fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("decoding the fields of %T: %w", v, err)
	}
	for _, k := range known {
		delete(f, k)
	}
	return f, nil
}

// decodeInto sets the fields of extra that known does not name on dst,
// leaving the others as they are; a field dst does not have is an error.
func decodeInto(dst any, extra fields, known ...string) error {
	f := make(fields, len(extra))
	for k, v := range extra {
		if !slices.Contains(known, k) {
			f[k] = v
		}
	}
	if len(f) == 0 {
		return nil
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encoding fields: %w", err)
	}
	return strictDecode(raw, dst)
}

func strictDecode(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("decoding into %T: %w", dst, err)
	}
	return nil
}

// setJSON stores v as JSON in annotation key, unless v encodes to nothing
// (null or {}): then an annotation already there stays.
func setJSON(meta *metav1.ObjectMeta, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding annotation %s: %w", key, err)
	}
	if string(raw) == "null" || string(raw) == "{}" {
		return nil
	}
	setAnnotation(meta, key, string(raw))
	return nil
}

func setAnnotation(meta *metav1.ObjectMeta, key, value string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = value
}

// dropAnnotation removes key; an object left without annotations has none
// at all, as it had before the conversion added one.
func dropAnnotation(meta *metav1.ObjectMeta, key string) {
	delete(meta.Annotations, key)
	if len(meta.Annotations) == 0 {
		meta.Annotations = nil
	}
}

// takeJSON decodes annotation key strictly into dst and removes it; it
// reports false, leaving the annotation, when there is none or it does
// not decode.
func takeJSON(meta *metav1.ObjectMeta, key string, dst any) bool {
	raw, ok := meta.Annotations[key]
	if !ok || strictDecode([]byte(raw), dst) != nil {
		return false
	}
	dropAnnotation(meta, key)
	return true
}

// takeFields is takeJSON into fields, applied by apply; when apply fails
// the annotation stays.
func takeFields(meta *metav1.ObjectMeta, key string, apply func(fields) error) {
	raw, ok := meta.Annotations[key]
	if !ok {
		return
	}
	var f fields
	if strictDecode([]byte(raw), &f) != nil || apply(f) != nil {
		return
	}
	dropAnnotation(meta, key)
}
