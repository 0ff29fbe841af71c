package oci

import (
	"errors"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// The kinds of failure. Every error of this package is an *Error whose Kind
// is one of these, so callers test with errors.Is(err, oci.ErrNotFound).
var (
	// ErrNotFound: the registry answered, but has no such blob, manifest or tag.
	ErrNotFound = errors.New("layer not found")
	// ErrUnauthorized: the registry refused the credentials (or their absence).
	ErrUnauthorized = errors.New("registry denied access")
	// ErrUnreachable: no answer (connection, DNS, TLS, timeout) or the
	// registry is unavailable (5xx, 429). Worth retrying later.
	ErrUnreachable = errors.New("registry unreachable")
	// ErrDigestMismatch: the registry served content that does not hash to
	// the requested digest. Nothing was cached.
	ErrDigestMismatch = errors.New("content does not match its digest")
	// ErrTooLarge: the layer is bigger than Options.MaxLayerBytes.
	ErrTooLarge = errors.New("layer too large")
	// ErrInvalid: a bad reference, credentials that cannot be parsed, an
	// artifact that is not a single-layer image, or a request the registry
	// rejected as malformed. Retrying the same input will not help.
	ErrInvalid = errors.New("invalid layer reference or content")
)

// Error is a failed registry operation.
type Error struct {
	// Op is what was being done, e.g. "fetching blob".
	Op string
	// Ref is the reference involved, e.g. registry.example.com/repo@sha256:….
	Ref string
	// Kind is one of the Err* values of this package.
	Kind error
	// Err is the cause; it may be nil.
	Err error
}

func (e *Error) Error() string {
	msg := e.Op + " " + e.Ref + ": " + e.Kind.Error()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap lets errors.Is and errors.As see both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Reason returns a CamelCase reason for a status condition, or "" when err
// is not from this package.
func Reason(err error) string {
	for _, r := range []struct {
		kind   error
		reason string
	}{
		{ErrNotFound, "LayerNotFound"},
		{ErrUnauthorized, "RegistryUnauthorized"},
		{ErrUnreachable, "RegistryUnreachable"},
		{ErrDigestMismatch, "DigestMismatch"},
		{ErrTooLarge, "LayerTooLarge"},
		{ErrInvalid, "InvalidLayer"},
	} {
		if errors.Is(err, r.kind) {
			return r.reason
		}
	}
	return ""
}

// kindOfStatus maps an HTTP status of a registry response to a kind.
func kindOfStatus(code int) error {
	switch {
	case code == http.StatusNotFound:
		return ErrNotFound
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ErrUnauthorized
	case code == http.StatusTooManyRequests || code >= http.StatusInternalServerError:
		return ErrUnreachable
	default:
		return ErrInvalid
	}
}

// kindOfTransportError classifies errors of a request that got no usable
// answer: a status error of go-containerregistry's transport (from the
// ping or token exchange) by its status, everything else — connection
// refused, DNS, TLS, timeouts — as unreachable.
func kindOfTransportError(err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return kindOfStatus(terr.StatusCode)
	}
	return ErrUnreachable
}
