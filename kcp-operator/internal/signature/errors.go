package signature

import (
	"errors"
	"fmt"
)

// Reasons of a failed check, for status conditions and Events.
const (
	// ReasonUnsigned: the template names no signature, or the descriptor
	// lacks the one it names.
	ReasonUnsigned = "Unsigned"
	// ReasonModified: the descriptor or the default CR changed after signing.
	ReasonModified = "ModifiedAfterSigning"
	// ReasonUntrusted: no trusted key or CA vouches for the signer (a wrong key).
	ReasonUntrusted = "UntrustedSigner"
	// ReasonExpired: the signer's certificate is expired or not yet valid.
	ReasonExpired = "CertificateExpired"
	// ReasonBadSignature: the signature does not verify with its certificate's key.
	ReasonBadSignature = "BadSignature"
	// ReasonNotCovered: something the operator installs is not fixed by the
	// signed descriptor (a layer by tag, a default CR it does not record).
	ReasonNotCovered = "NotCoveredBySignature"
	// ReasonMalformed: the signature or descriptor cannot be read.
	ReasonMalformed = "MalformedSignature"
	// ReasonNoTrust: there are no trust anchors, or they cannot be read.
	ReasonNoTrust = "NoTrustAnchors"
)

// Error is a failed signature check.
type Error struct {
	// Reason is one of the Reason* values.
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

func fail(reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ReasonOf returns the reason of a check's error, "" for other errors.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}
