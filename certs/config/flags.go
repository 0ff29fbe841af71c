package config

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FlagPrefix starts every flag of this package.
const FlagPrefix = "cert-"

// BindFlags registers the flags a KCP operator sets on fs, with o's
// current values as defaults; call it on Defaults(). Every other option is
// a constant of Defaults or follows a flag: the rotation's grace period
// and check interval follow --cert-propagation-delay.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	p := func(name string) string { return FlagPrefix + name }
	fs.Var((*issuerValue)(o), p("issuer"), "cert-manager issuer that signs the certificates, as [[GROUP/]KIND/]NAME (KIND Issuer, in --cert-namespace, or ClusterIssuer; GROUP "+DefaultIssuerGroup+"); empty: the operator signs them itself with a CA it keeps in --cert-ca-secret")
	fs.StringVar(&o.Namespace, p("namespace"), o.Namespace, "KCP namespace of the CA and trust bundle Secrets and of cert-manager Certificates")
	fs.Var((*caSecretValue)(o), p("ca-secret"), "Secret ([NAMESPACE/]NAME; namespace --cert-namespace) with the CA keys, or with --cert-issuer the CA the issuer signs with, read for the trust bundle")
	fs.Var((*listValue)(&o.EndpointDNSNames), p("endpoint-dns-names"), "comma-separated DNS names of the event endpoint, and the hosts of the Istio Gateway; empty: its certificate is not managed")
	fs.StringVar(&o.EndpointNamespace, p("endpoint-namespace"), o.EndpointNamespace, "namespace of the event endpoint's certificate Secret "+DefaultEndpointSecret+" (the Istio ingress gateway's, or the listener's in direct mode)")
	fs.Var((*listValue)(&o.TrustedCAFingerprints), p("trusted-ca-fingerprints"), "comma-separated SHA-256 fingerprints (hex, colons allowed) of CAs the operator did not make that stay in the trust bundle, e.g. the CA of a PKI being migrated from; any other CA added to the bundle is dropped")
	fs.Var((*propagationValue)(o), p("propagation-delay"), "trust a new CA this long before client certificates are signed by it; the endpoint certificate switches to it 12 times this long after it joined the bundle, when every agent has it")
}

// The rotation's other steps in multiples of the propagation delay.
const (
	gracePerPropagation = 12
	// checksPerPropagation: the rotator looks at the CAs at least this often
	// per propagation delay, and at least every RotationInterval.
	checksPerPropagation = 5
)

type propagationValue Options

func (v *propagationValue) String() string { return v.PropagationDelay.String() }

func (v *propagationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	v.PropagationDelay, v.GracePeriod = d, gracePerPropagation*d
	v.RotationInterval = min(DefaultRotationInterval, max(time.Second, d/checksPerPropagation))
	return nil
}

type issuerValue Options

func (v *issuerValue) String() string {
	if v.IssuerName == "" {
		return ""
	}
	return v.IssuerGroup + "/" + v.IssuerKind + "/" + v.IssuerName
}

func (v *issuerValue) Set(s string) error {
	parts := strings.Split(s, "/")
	if s == "" {
		v.Backend, v.IssuerName = BackendBuiltin, ""
		return nil
	}
	if len(parts) > 3 || slices.Contains(parts, "") {
		return fmt.Errorf("%q: want [[GROUP/]KIND/]NAME", s)
	}
	v.Backend, v.IssuerName, v.IssuerKind, v.IssuerGroup = BackendCertManager, parts[len(parts)-1], DefaultIssuerKind, DefaultIssuerGroup
	if len(parts) > 1 {
		v.IssuerKind = parts[len(parts)-2]
	}
	if len(parts) > 2 {
		v.IssuerGroup = parts[0]
	}
	return nil
}

type caSecretValue Options

func (v *caSecretValue) String() string {
	if v.CASecretNamespace == "" {
		return v.CASecret
	}
	return v.CASecretNamespace + "/" + v.CASecret
}

func (v *caSecretValue) Set(s string) error {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		ns, name = "", s
	}
	if name == "" || strings.Contains(name, "/") || (ok && ns == "") {
		return fmt.Errorf("%q: want NAME or NAMESPACE/NAME", s)
	}
	v.CASecretNamespace, v.CASecret = ns, name
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
