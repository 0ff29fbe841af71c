package conversion

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Path is where the webhook server answers ConversionReviews.
const Path = "/convert"

// Target is where the API server calls the webhook: the operator's Service,
// or a URL (an operator run outside the cluster, as in the e2e harness).
type Target struct {
	Service types.NamespacedName
	Port    int32
	URL     *url.URL
}

// ServicePort is the port of the webhook's Service.
const ServicePort int32 = 443

// ParseTarget parses the value of --webhook-service: a Service
// (namespace/name, port ServicePort) or a URL (https://host[:port]/convert).
func ParseTarget(ref string) (Target, error) {
	if strings.Contains(ref, "://") {
		u, err := url.Parse(ref)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path != Path || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return Target{}, fmt.Errorf("--webhook-service %q: want namespace/name or https://host[:port]%s", ref, Path)
		}
		return Target{URL: u}, nil
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || validation.IsDNS1123Label(ns) != nil || validation.IsDNS1035Label(name) != nil {
		return Target{}, fmt.Errorf("--webhook-service %q: want namespace/name of a Service or https://host[:port]%s", ref, Path)
	}
	return Target{Service: types.NamespacedName{Namespace: ns, Name: name}, Port: ServicePort}, nil
}

// IsZero reports whether no target is set.
func (t Target) IsZero() bool { return t.URL == nil && t.Service.Name == "" }

// String names the target for logs and errors.
func (t Target) String() string {
	if t.URL != nil {
		return t.URL.String()
	}
	return fmt.Sprintf("service %s port %d", t.Service, t.Port)
}

// ClientConfig is the CRD's spec.conversion.webhook.clientConfig, without
// the caBundle (the operator keeps that).
func (t Target) ClientConfig() *apiextensionsv1.WebhookClientConfig {
	if t.URL != nil {
		return &apiextensionsv1.WebhookClientConfig{URL: ptr.To(t.URL.String())}
	}
	return &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
		Namespace: t.Service.Namespace, Name: t.Service.Name, Path: ptr.To(Path), Port: ptr.To(t.Port),
	}}
}

// Calls reports whether cc calls this target, so that the operator never
// puts its caBundle into a conversion that calls someone else.
func (t Target) Calls(cc *apiextensionsv1.WebhookClientConfig) bool {
	want := t.ClientConfig()
	switch {
	case cc == nil:
		return false
	case t.URL != nil:
		return cc.URL != nil && *cc.URL == *want.URL
	default:
		s := cc.Service
		return s != nil && s.Namespace == want.Service.Namespace && s.Name == want.Service.Name &&
			ptr.Deref(s.Path, "") == Path && ptr.Deref(s.Port, 443) == t.Port
	}
}

// CertNames are the names the serving certificate must carry: the
// Service's DNS names as the API server dials them, or the URL's host.
func (t Target) CertNames() (dns []string, ips []net.IP) {
	if t.URL != nil {
		if ip := net.ParseIP(t.URL.Hostname()); ip != nil {
			return nil, []net.IP{ip}
		}
		return []string{t.URL.Hostname()}, nil
	}
	base := t.Service.Name + "." + t.Service.Namespace + ".svc"
	return []string{base, base + ".cluster.local"}, nil
}
