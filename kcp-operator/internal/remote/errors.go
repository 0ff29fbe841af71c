package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Reason classifies why a runtime client failed, for eviction and metrics.
type Reason string

// Reasons that make a cached client useless.
const (
	ReasonConnection    Reason = "connection"
	ReasonTLS           Reason = "tls"
	ReasonAuthorization Reason = "authorization"
	ReasonTimeout       Reason = "timeout"
)

// Classify reports whether err means the runtime client should be dropped,
// and why. API errors such as NotFound or Conflict keep the client.
func Classify(err error) (Reason, bool) {
	if err == nil {
		return "", false
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalidCert      x509.CertificateInvalidError
		hostname         x509.HostnameError
		recordHeader     tls.RecordHeaderError
		tlsVerify        *tls.CertificateVerificationError
		netErr           net.Error
		opErr            *net.OpError
		dnsErr           *net.DNSError
	)
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &invalidCert), errors.As(err, &hostname),
		errors.As(err, &recordHeader), errors.As(err, &tlsVerify):
		return ReasonTLS, true
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return ReasonAuthorization, true
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err), errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout, true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.As(err, &opErr), errors.As(err, &dnsErr):
		return ReasonConnection, true
	default:
		return "", false
	}
}
