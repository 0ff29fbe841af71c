package config

import (
	"flag"
	"strings"

	"github.com/lifecycle-manager/certs/pki"
)

// FlagPrefix starts every flag of this package.
const FlagPrefix = "cert-"

// BindFlags registers a flag for every option on fs, with o's current values
// as defaults; call it on Defaults(). The flags are listed in certs/README.md.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	p := func(name string) string { return FlagPrefix + name }
	fs.Var((*backendValue)(&o.Backend), p("backend"), "who signs certificates: builtin or cert-manager")
	fs.StringVar(&o.Namespace, p("namespace"), o.Namespace, "KCP namespace of the CA and trust bundle Secrets and of cert-manager Certificates")
	fs.StringVar(&o.CASecret, p("ca-secret"), o.CASecret, "builtin: Secret with the CA keys; cert-manager: Secret of the CA the issuer signs with")
	fs.StringVar(&o.CASecretNamespace, p("ca-secret-namespace"), o.CASecretNamespace, "namespace of --cert-ca-secret (default: --cert-namespace)")
	fs.StringVar(&o.BundleSecret, p("bundle-secret"), o.BundleSecret, "Secret with the trust bundle (ca.crt)")
	fs.Var((*keyAlgorithmValue)(&o.KeyAlgorithm), p("key-algorithm"), "key algorithm: ecdsa-p256, rsa-2048 or rsa-4096")
	fs.DurationVar(&o.CADuration, p("ca-duration"), o.CADuration, "lifetime of a built-in CA")
	fs.DurationVar(&o.CARenewBefore, p("ca-renew-before"), o.CARenewBefore, "start a CA rotation this long before the newest CA expires")
	fs.DurationVar(&o.CertDuration, p("duration"), o.CertDuration, "lifetime of agent and endpoint certificates")
	fs.DurationVar(&o.CertRenewBefore, p("renew-before"), o.CertRenewBefore, "renew a certificate this long before it expires")
	fs.DurationVar(&o.PropagationDelay, p("propagation-delay"), o.PropagationDelay, "trust a new CA this long before client certificates are signed by it")
	fs.DurationVar(&o.GracePeriod, p("grace-period"), o.GracePeriod, "switch the endpoint certificate to a new CA this long after it joined the bundle")
	fs.DurationVar(&o.RotationInterval, p("rotation-interval"), o.RotationInterval, "how often the rotator checks the CAs at the latest")
	fs.DurationVar(&o.EmergencyDeadline, p("emergency-deadline"), o.EmergencyDeadline, "after an emergency CA rotation was asked for, drop the old CAs at the latest this late, even if some agent has no certificate of the new CA yet")
	fs.StringVar(&o.DenySecret, p("deny-secret"), o.DenySecret, "Secret in --cert-namespace with the deny list of leaked certificates (key serials); empty: none")
	fs.Var((*listValue)(&o.TrustedCAFingerprints), p("trusted-ca-fingerprints"), "comma-separated SHA-256 fingerprints of CAs the operator did not make that stay in the trust bundle; any other CA added to it is dropped")
	fs.StringVar(&o.IssuerName, p("issuer-name"), o.IssuerName, "cert-manager issuer name (cert-manager backend)")
	fs.StringVar(&o.IssuerKind, p("issuer-kind"), o.IssuerKind, "cert-manager issuer kind: Issuer or ClusterIssuer")
	fs.StringVar(&o.IssuerGroup, p("issuer-group"), o.IssuerGroup, "cert-manager issuer API group")
	fs.StringVar(&o.AgentService, p("agent-service"), o.AgentService, "name of the agent's Service in the runtime (DNS names of its certificate)")
	fs.StringVar(&o.AgentServiceNamespace, p("agent-service-namespace"), o.AgentServiceNamespace, "namespace of the agent's Service in the runtime")
	fs.BoolVar(&o.DomainSANs, p("domain-sans"), o.DomainSANs, "add the Kyma's skr-domain annotation to the agent certificate's DNS names")
	fs.StringVar(&o.KymaNamespace, p("kyma-namespace"), o.KymaNamespace, "only Kymas in this namespace get agent certificates from the rotator (default: all namespaces)")
	fs.StringVar(&o.RuntimeSecret, p("runtime-secret"), o.RuntimeSecret, "name of the agent's TLS Secret in the runtime")
	fs.StringVar(&o.RuntimeNamespace, p("runtime-namespace"), o.RuntimeNamespace, "namespace of the agent's TLS Secret in the runtime")
	fs.StringVar(&o.EndpointSecret, p("endpoint-secret"), o.EndpointSecret, "Secret with the event endpoint's server certificate")
	fs.StringVar(&o.EndpointNamespace, p("endpoint-namespace"), o.EndpointNamespace, "namespace of --cert-endpoint-secret")
	fs.Var((*listValue)(&o.EndpointDNSNames), p("endpoint-dns-names"), "comma-separated DNS names of the event endpoint; empty: its certificate is not managed")
}

type backendValue Backend

func (v *backendValue) String() string { return string(*v) }

func (v *backendValue) Set(s string) error {
	*v = backendValue(s)
	return nil // Validate reports a wrong backend together with every other problem
}

type keyAlgorithmValue pki.KeyAlgorithm

func (v *keyAlgorithmValue) String() string { return string(*v) }

func (v *keyAlgorithmValue) Set(s string) error {
	alg, err := pki.ParseKeyAlgorithm(s)
	if err != nil {
		return err
	}
	*v = keyAlgorithmValue(alg)
	return nil
}

type listValue []string

func (v *listValue) String() string { return strings.Join(*v, ",") }

func (v *listValue) Set(s string) error {
	*v = nil
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*v = append(*v, item)
		}
	}
	return nil
}
