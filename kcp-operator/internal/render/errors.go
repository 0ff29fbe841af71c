package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DocumentError is a problem with one document of a module's manifests.
type DocumentError struct {
	// Source is the file in the tar or chart; empty for a plain YAML stream.
	Source string
	// Document is the 1-based position of the document in Source; 0 when
	// the problem is not with one document.
	Document int
	// Object names the object, e.g. "Deployment keda/keda-operator", when known.
	Object string
	Err    error
}

func (e *DocumentError) Error() string {
	var where []string
	if e.Source != "" {
		where = append(where, e.Source)
	}
	if e.Document > 0 {
		where = append(where, fmt.Sprintf("document %d", e.Document))
	}
	msg := strings.Join(where, ", ")
	if e.Object != "" {
		if msg != "" {
			msg += " "
		}
		msg += "(" + e.Object + ")"
	}
	if msg == "" {
		return e.Err.Error()
	}
	return msg + ": " + e.Err.Error()
}

func (e *DocumentError) Unwrap() error { return e.Err }

// origin is where an object came from, for errors found after parsing.
type origin struct {
	source   string
	document int
}

func (o origin) fail(obj *unstructured.Unstructured, err error) *DocumentError {
	return &DocumentError{Source: o.source, Document: o.document, Object: describe(obj), Err: err}
}

func (o origin) String() string {
	if o.source == "" {
		return fmt.Sprintf("document %d", o.document)
	}
	return fmt.Sprintf("%s, document %d", o.source, o.document)
}

// describe names an object as "Kind namespace/name" or "Kind name".
func describe(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	kind := obj.GetKind()
	if kind == "" {
		return name
	}
	return strings.TrimSpace(kind + " " + name)
}
