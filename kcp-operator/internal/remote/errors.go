package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
)

// ReasonKubeconfigRefused is the condition reason of a runtime whose
// kubeconfig the operator refuses to use.
const ReasonKubeconfigRefused = "KubeconfigRefused"

// KubeconfigRefusedError means a Kyma's kubeconfig Secret asks for what the
// operator does not do for a runtime (see internal/kubeconfig). It is
// permanent: the same Secret is refused again, so callers wait for the
// Secret to change instead of retrying.
type KubeconfigRefusedError struct {
	// Kyma and Secret are namespace/name of the Kyma and its access Secret.
	Kyma, Secret string
	Err          *kubeconfig.RefusedError
}

func (e *KubeconfigRefusedError) Error() string {
	return fmt.Sprintf("the runtime kubeconfig of Kyma %s in Secret %s is refused: %s", e.Kyma, e.Secret, e.Err.Reasons())
}

func (e *KubeconfigRefusedError) Unwrap() error { return e.Err }

// Refused reports whether err is (or wraps) a refused kubeconfig.
func Refused(err error) bool {
	var refused *KubeconfigRefusedError
	return errors.As(err, &refused)
}

// ConditionReason is the condition reason for a failure to get or use a
// runtime client: KubeconfigRefused for a refused kubeconfig, else fallback.
func ConditionReason(err error, fallback string) string {
	if Refused(err) {
		return ReasonKubeconfigRefused
	}
	return fallback
}

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
