package admission

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The AdmissionReview versions: the webhook configuration asks for v1; a
// v1beta1 review (same shape) is answered in its own version.
const (
	apiVersionV1      = "admission.k8s.io/v1"
	apiVersionV1beta1 = "admission.k8s.io/v1beta1"
	reviewKind        = "AdmissionReview"
)

// Operations of an admission request.
const (
	opCreate  = "CREATE"
	opUpdate  = "UPDATE"
	opDelete  = "DELETE"
	opConnect = "CONNECT"
)

// review is the part of an AdmissionReview the agent reads.
type review struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Request    *request `json:"request"`
}

// request is the part of an AdmissionRequest the agent reads.
type request struct {
	UID         string           `json:"uid"`
	Kind        groupVersionKind `json:"kind"`
	SubResource string           `json:"subResource"`
	Name        string           `json:"name"`
	Namespace   string           `json:"namespace"`
	Operation   string           `json:"operation"`
	DryRun      bool             `json:"dryRun"`
	Object      json.RawMessage  `json:"object"`
	OldObject   json.RawMessage  `json:"oldObject"`
}

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// errUnreadable marks bodies without a readable request UID: they cannot be
// answered with an AdmissionReview.
var errUnreadable = errors.New("no admission request with a UID")

// decodeReview reads a review. A body that is JSON with a readable UID but
// with fields of the wrong type still returns the request, with the error:
// it is answered, and allowed, as malformed.
func decodeReview(body []byte) (*review, error) {
	var rv review
	err := json.Unmarshal(body, &rv)
	if rv.Request == nil || rv.Request.UID == "" {
		if err == nil {
			err = errors.New("request or its uid is missing")
		}
		return nil, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	if err != nil {
		return &rv, fmt.Errorf("decoding admission review %s: %w", rv.Request.UID, err)
	}
	if rv.Kind != reviewKind || (rv.APIVersion != apiVersionV1 && rv.APIVersion != apiVersionV1beta1) {
		return &rv, fmt.Errorf("admission review %s: unsupported apiVersion %q or kind %q", rv.Request.UID, rv.APIVersion, rv.Kind)
	}
	return &rv, nil
}

// allowed is the AdmissionReview that allows the request with the UID.
type allowed struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Response   allowedResponse `json:"response"`
}

type allowedResponse struct {
	UID     string `json:"uid"`
	Allowed bool   `json:"allowed"`
}

// encodeAllowed answers a review in its own version (v1 unless it was v1beta1).
func encodeAllowed(rv *review) ([]byte, error) {
	version := apiVersionV1
	if rv.APIVersion == apiVersionV1beta1 {
		version = apiVersionV1beta1
	}
	b, err := json.Marshal(allowed{
		APIVersion: version, Kind: reviewKind,
		Response: allowedResponse{UID: rv.Request.UID, Allowed: true},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding admission response: %w", err)
	}
	return b, nil
}
