package identity

import (
	"crypto/x509"
	"errors"
	"fmt"
)

// Reasons why an identity was not established; they label metrics, so the
// set is fixed.
const (
	ReasonNoCertificate        = "no_certificate"
	ReasonMalformedCertificate = "malformed_certificate"
	ReasonUnknownAuthority     = "unknown_authority"
	ReasonExpired              = "expired"
	ReasonWrongUsage           = "wrong_usage"
	ReasonInvalid              = "invalid_certificate"
	ReasonNoRuntimeID          = "no_runtime_id"
	ReasonUntrustedProxy       = "untrusted_proxy"
	ReasonMalformedXFCC        = "malformed_xfcc"
	// ReasonDenied: the certificate verifies but is on the deny list
	// (a leaked runtime certificate, see certs/denylist).
	ReasonDenied = "denied_certificate"
)

// Failure is an identity that could not be established.
type Failure struct {
	// Reason is one of the Reason constants.
	Reason string
	Err    error
}

func (f *Failure) Error() string { return f.Reason + ": " + f.Err.Error() }

func (f *Failure) Unwrap() error { return f.Err }

func fail(reason string, format string, args ...any) *Failure {
	return &Failure{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// Reason returns the reason of a Failure, or classifies a verification
// error of tlsreload.Bundle.Verify or crypto/x509.
func Reason(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Reason
	}
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return ReasonUnknownAuthority
	}
	var invalid x509.CertificateInvalidError
	if errors.As(err, &invalid) {
		switch invalid.Reason {
		case x509.Expired:
			return ReasonExpired
		case x509.IncompatibleUsage:
			return ReasonWrongUsage
		default:
			return ReasonInvalid
		}
	}
	return ReasonInvalid
}
