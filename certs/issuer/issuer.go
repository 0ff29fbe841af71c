package issuer

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
)

// Purpose says what a certificate is for, and so which CA it comes from
// during a rotation.
type Purpose string

// The purposes.
const (
	// PurposeAgent is a runtime's agent certificate: its client certificate
	// towards the KCP and its serving certificate for the runtime's API
	// server. It follows the client CA of the rotation.
	PurposeAgent Purpose = "agent"
	// PurposeEndpoint is the server certificate of the event endpoint
	// (listener or gateway). It follows the server CA of the rotation.
	PurposeEndpoint Purpose = "endpoint"
)

// Usage returns the key usages of the purpose.
func (p Purpose) Usage() pki.Usage {
	if p == PurposeEndpoint {
		return pki.UsageServer
	}
	return pki.UsageClient | pki.UsageServer
}

// TargetCA returns the CA that certificates of the purpose should come from at now.
func (p Purpose) TargetCA(st trust.State, now time.Time, t trust.Timing) *x509.Certificate {
	if p == PurposeEndpoint {
		return st.ServerCA(now, t)
	}
	return st.ClientCA(now, t)
}

// Request describes a certificate and where it goes.
type Request struct {
	// Secret receives ca.crt (the trust bundle), tls.crt and tls.key.
	Secret types.NamespacedName
	// Owner, when set, becomes the controller owner of the objects created
	// in its namespace, so that they go when it goes (e.g. the Kyma).
	Owner client.Object
	// Purpose selects usages and CA.
	Purpose Purpose
	// CommonName is the runtime ID for agent certificates: the identity the
	// listener reads.
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	// Labels go on the Secret (and on cert-manager objects).
	Labels map[string]string
	// Denied, when set, reports certificates that must be replaced at once
	// whatever else holds (the deny list of leaked certificates).
	Denied func(*x509.Certificate) bool
}

// Validate checks what every backend needs.
func (r Request) Validate() error {
	var errs []error
	if r.Secret.Name == "" || r.Secret.Namespace == "" {
		errs = append(errs, errors.New("a certificate request needs a Secret name and namespace"))
	}
	if r.CommonName == "" {
		errs = append(errs, errors.New("a certificate request needs a common name"))
	}
	if r.Purpose != PurposeAgent && r.Purpose != PurposeEndpoint {
		errs = append(errs, errors.New("a certificate request needs the purpose agent or endpoint"))
	}
	return errors.Join(errs...)
}

// Result says what Ensure found or did.
type Result struct {
	// Material is the Secret's content after Ensure: what to sync to the
	// runtime. Zero while Pending with no usable certificate yet.
	Material tlssecret.Material
	// Issued is true when a new certificate went into the Secret.
	Issued bool
	// Changed is true when the Secret was written (new certificate or bundle).
	Changed bool
	// Reason says why a new certificate was needed; empty when none was.
	Reason Reason
	// Pending is true while the backend has not delivered the certificate
	// the request needs (cert-manager is issuing); call Ensure again.
	Pending bool
	// NotAfter of the certificate in Material.
	NotAfter time.Time
}

// ErrNotSupported is returned for operations a backend cannot do.
var ErrNotSupported = errors.New("not supported by this backend")

// Issuer keeps certificate Secrets current.
type Issuer interface {
	// Ensure makes req.Secret hold a certificate for req, signed by the CA
	// the rotation wants for req.Purpose, with the current trust bundle. It
	// writes only when something changed.
	Ensure(ctx context.Context, req Request) (Result, error)
	// Remove deletes the Secret and whatever the backend made for it. A
	// missing Secret is no error.
	Remove(ctx context.Context, secret types.NamespacedName) error
}

// CASource is where the CAs come from; the rotator puts them into the bundle.
type CASource interface {
	// CurrentCA returns the CA the backend signs with now; builtin creates
	// its first CA on demand.
	CurrentCA(ctx context.Context) (*x509.Certificate, error)
	// RotateCA starts a new CA now: builtin creates one, cert-manager asks
	// cert-manager to re-issue the CA's Certificate. The rotator adds it to
	// the bundle once CurrentCA returns it.
	RotateCA(ctx context.Context) error
}

// Backend is both: what the operator gets from a configured PKI.
type Backend interface {
	Issuer
	CASource
}

// TimingOf returns the rotation timing of the options.
func TimingOf(o config.Options) trust.Timing {
	return trust.Timing{PropagationDelay: o.PropagationDelay, GracePeriod: o.GracePeriod}
}

// LifetimeOf returns the certificate lifetime of the options.
func LifetimeOf(o config.Options) Lifetime {
	return Lifetime{Duration: o.CertDuration, RenewBefore: o.CertRenewBefore}
}
