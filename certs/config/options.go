package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

// Backend names who signs certificates.
type Backend string

// The backends.
const (
	// BackendBuiltin signs in-process with a CA kept in a KCP Secret.
	BackendBuiltin Backend = "builtin"
	// BackendCertManager asks cert-manager through Certificate objects.
	BackendCertManager Backend = "cert-manager"
)

// Defaults of the options; see Defaults for what each one means.
const (
	DefaultNamespace          = "kcp-system"
	DefaultCASecret           = "lifecycle-manager-ca"
	DefaultBundleSecret       = "lifecycle-manager-ca-bundle"
	DefaultCADuration         = 365 * 24 * time.Hour
	DefaultCARenewBefore      = 90 * 24 * time.Hour
	DefaultCertDuration       = 90 * 24 * time.Hour
	DefaultCertRenewBefore    = 30 * 24 * time.Hour
	DefaultPropagationDelay   = 5 * time.Minute
	DefaultGracePeriod        = gracePerPropagation * DefaultPropagationDelay
	DefaultRotationInterval   = time.Minute
	DefaultIssuerKind         = "Issuer"
	DefaultIssuerGroup        = "cert-manager.io"
	DefaultAgentService       = "skr-agent"
	DefaultRuntimeSecret      = "skr-agent-tls"
	DefaultEndpointSecret     = "lifecycle-manager-endpoint-tls"
	DefaultEndpointNamespace  = "istio-system"
	DefaultClientSecretSuffix = "-webhook-tls"
	DefaultEmergencyDeadline  = time.Hour
	DefaultDenySecret         = "lifecycle-manager-denied-certificates"
	// DenySecretKey is the key of the deny list in the deny Secret.
	DenySecretKey = "serials"
)

// Options configure the PKI. The zero value is not usable: start from Defaults.
type Options struct {
	// Backend signs the certificates: builtin or cert-manager.
	Backend Backend
	// Namespace in the KCP of the CA and trust bundle Secrets and, with
	// cert-manager, of the Certificate objects (a namespaced Issuer must live here).
	Namespace string
	// CASecret is, with builtin, the Secret with the CA keys (created when
	// missing); with cert-manager, the Secret of the CA the issuer signs with
	// (for a CA issuer its spec.ca.secretName), read to build the trust bundle.
	CASecret string
	// CASecretNamespace is the namespace of CASecret; empty means Namespace.
	CASecretNamespace string
	// BundleSecret holds the trust bundle (ca.crt) in Namespace.
	BundleSecret string
	// KeyAlgorithm of the CA (builtin) and of every certificate.
	KeyAlgorithm pki.KeyAlgorithm
	// CADuration is the lifetime of a built-in CA.
	CADuration time.Duration
	// CARenewBefore starts a CA rotation this long before the newest CA
	// expires (a third of its lifetime when that is shorter).
	CARenewBefore time.Duration
	// CertDuration is the lifetime of agent and endpoint certificates
	// (never beyond their CA).
	CertDuration time.Duration
	// CertRenewBefore renews a certificate this long before it expires.
	CertRenewBefore time.Duration
	// PropagationDelay is how long a new CA is only trusted before client
	// certificates are signed by it, so that every listener and gateway has
	// loaded the new bundle first (Secret volumes take a minute or two).
	PropagationDelay time.Duration
	// GracePeriod after a new CA joined the bundle, the endpoint's server
	// certificate switches to it: by then every agent has the new bundle.
	GracePeriod time.Duration
	// RotationInterval is how often the rotator checks the CAs at the latest.
	RotationInterval time.Duration
	// EmergencyDeadline after an emergency rotation was asked for, the old
	// CAs leave the bundle even if some agent still has a certificate of
	// them (it is locked out until its runtime gets the new one).
	EmergencyDeadline time.Duration
	// DenySecret in Namespace holds the deny list of leaked certificates
	// (key DenySecretKey, see certs/denylist); empty means none.
	DenySecret string
	// TrustedCAFingerprints are the SHA-256 fingerprints (hex, colons
	// allowed) of CAs that stay in the trust bundle although the operator
	// did not make them (say, the CA of a PKI being migrated from). Every
	// other CA that someone adds to the bundle is dropped.
	TrustedCAFingerprints []string

	// IssuerName, IssuerKind and IssuerGroup reference the cert-manager
	// issuer (cert-manager backend only; IssuerName is required there).
	IssuerName  string
	IssuerKind  string
	IssuerGroup string

	// AgentService and AgentServiceNamespace name the agent's Service in the
	// runtime; its DNS names go into the agent's certificate.
	AgentService          string
	AgentServiceNamespace string
	// DomainSANs adds the Kyma's skr-domain annotation to the agent's DNS names.
	DomainSANs bool
	// KymaNamespace limits the rotator's pass over all agents to the Kymas
	// of one namespace; empty means every namespace.
	KymaNamespace string

	// RuntimeSecret and RuntimeNamespace name the agent's TLS Secret in the runtime.
	RuntimeSecret    string
	RuntimeNamespace string

	// EndpointSecret and EndpointNamespace name the server certificate of
	// the event endpoint (listener or Istio gateway), with ca.crt the bundle.
	EndpointSecret    string
	EndpointNamespace string
	// EndpointDNSNames are the names in the endpoint's certificate (the host
	// of KCP_ADDR); empty means certs does not manage that certificate.
	EndpointDNSNames []string

	// Now is the clock; nil means time.Now. Not a flag: tests move it.
	Now func() time.Time
}

// Defaults returns the options with every default set.
func Defaults() Options {
	return Options{
		Backend:               BackendBuiltin,
		Namespace:             DefaultNamespace,
		CASecret:              DefaultCASecret,
		BundleSecret:          DefaultBundleSecret,
		KeyAlgorithm:          pki.ECDSAP256,
		CADuration:            DefaultCADuration,
		CARenewBefore:         DefaultCARenewBefore,
		CertDuration:          DefaultCertDuration,
		CertRenewBefore:       DefaultCertRenewBefore,
		PropagationDelay:      DefaultPropagationDelay,
		GracePeriod:           DefaultGracePeriod,
		RotationInterval:      DefaultRotationInterval,
		EmergencyDeadline:     DefaultEmergencyDeadline,
		DenySecret:            DefaultDenySecret,
		IssuerKind:            DefaultIssuerKind,
		IssuerGroup:           DefaultIssuerGroup,
		AgentService:          DefaultAgentService,
		AgentServiceNamespace: shared.DefaultRuntimeNamespace,
		DomainSANs:            true,
		RuntimeSecret:         DefaultRuntimeSecret,
		RuntimeNamespace:      shared.DefaultRuntimeNamespace,
		EndpointSecret:        DefaultEndpointSecret,
		EndpointNamespace:     DefaultEndpointNamespace,
	}
}

// Clock returns the current time of the options' clock.
func (o Options) Clock() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// CASecretNamespaceOrDefault is CASecretNamespace, or Namespace when empty.
func (o Options) CASecretNamespaceOrDefault() string {
	if o.CASecretNamespace != "" {
		return o.CASecretNamespace
	}
	return o.Namespace
}

// AgentDNSNames are the DNS names of the agent's Service.
func (o Options) AgentDNSNames() []string {
	svc := o.AgentService + "." + o.AgentServiceNamespace + ".svc"
	return []string{svc, svc + ".cluster.local"}
}

// ClientSecretName is the KCP Secret of a Kyma's agent certificate.
func ClientSecretName(kyma string) string { return kyma + DefaultClientSecretSuffix }

// Validate reports every problem at once.
func (o Options) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(o.Backend == BackendBuiltin || o.Backend == BackendCertManager,
		"backend %q: want %s or %s", o.Backend, BackendBuiltin, BackendCertManager)
	for name, v := range map[string]string{
		"namespace": o.Namespace, "CA secret": o.CASecret, "bundle secret": o.BundleSecret,
		"agent service": o.AgentService, "agent service namespace": o.AgentServiceNamespace,
		"runtime secret": o.RuntimeSecret, "runtime namespace": o.RuntimeNamespace,
		"endpoint secret": o.EndpointSecret, "endpoint namespace": o.EndpointNamespace,
	} {
		check(v != "", "%s must not be empty", name)
	}
	if _, err := pki.ParseKeyAlgorithm(string(o.KeyAlgorithm)); err != nil {
		errs = append(errs, err)
	}
	check(o.CADuration > 0 && o.CARenewBefore > 0 && o.CARenewBefore < o.CADuration,
		"CA renew-before (%s) must be positive and shorter than the CA duration (%s)", o.CARenewBefore, o.CADuration)
	check(o.CertDuration > 0 && o.CertRenewBefore > 0 && o.CertRenewBefore < o.CertDuration,
		"certificate renew-before (%s) must be positive and shorter than the certificate duration (%s)",
		o.CertRenewBefore, o.CertDuration)
	check(o.PropagationDelay >= 0 && o.GracePeriod >= o.PropagationDelay,
		"grace period (%s) must not be shorter than the propagation delay (%s), which must not be negative",
		o.GracePeriod, o.PropagationDelay)
	check(o.RotationInterval > 0, "rotation interval must be positive, got %s", o.RotationInterval)
	// Before the propagation delay no agent can have a certificate of the
	// new CA: dropping the old ones then would lock every runtime out.
	check(o.EmergencyDeadline > o.PropagationDelay,
		"emergency deadline (%s) must be longer than the propagation delay (%s)", o.EmergencyDeadline, o.PropagationDelay)
	for _, fp := range o.TrustedCAFingerprints {
		norm := trust.NormalizeFingerprint(fp)
		_, err := hex.DecodeString(norm)
		check(err == nil && len(norm) == 2*sha256.Size, "trusted CA fingerprint %q: want the SHA-256 of the certificate in hex", fp)
	}
	if o.Backend == BackendCertManager {
		check(o.IssuerName != "", "the cert-manager backend needs an issuer name")
		check(o.IssuerKind == "Issuer" || o.IssuerKind == "ClusterIssuer" || o.IssuerGroup != DefaultIssuerGroup,
			"issuer kind %q: want Issuer or ClusterIssuer", o.IssuerKind)
	}
	return errors.Join(errs...)
}
