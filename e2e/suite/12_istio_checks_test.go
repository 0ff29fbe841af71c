package suite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// What a user of the push path needs from the ingress gateway, read from
// the Envoy configuration that istiod generates for it (docs/testing.md,
// "Istio"). Each check returns an error saying what is missing, so that a
// scenario can show that a wrong expectation fails.

// endpointSecret is the endpoint certificate's Secret, the Gateway's
// credentialName (charts/kcp-operator README: mutual TLS).
const endpointSecret = "lifecycle-manager-endpoint-tls"

// eventRetry is the retry policy the operator means the gateway to apply
// (kcp-operator/internal/controller/watcher/istio.go, eventRetries).
var eventRetry = struct {
	attempts   uint32
	perTry     time.Duration
	retryOn    []string
	retryCodes []uint32
}{3, 5 * time.Second, []string{"connect-failure", "refused-stream", "reset"}, []uint32{503}}

// eventChain finds the filter chain of the listener on the Gateway's HTTPS
// port that serves host by SNI, checks its mutual TLS and client certificate
// forwarding, and returns the RDS route configuration it uses.
func eventChain(cfg *harness.ProxyConfig, host string) (string, error) {
	for _, l := range cfg.Listeners {
		if l.GetAddress().GetSocketAddress().GetPortValue() != gatewayPort {
			continue
		}
		for _, fc := range l.GetFilterChains() {
			if !slices.Contains(fc.GetFilterChainMatch().GetServerNames(), host) {
				continue
			}
			if err := mutualTLS(fc); err != nil {
				return "", fmt.Errorf("listener %s, host %s: %w", l.GetName(), host, err)
			}
			m := harness.ConnectionManager(fc)
			if err := forwardsClientCert(m); err != nil {
				return "", fmt.Errorf("listener %s, host %s: %w", l.GetName(), host, err)
			}
			return m.GetRds().GetRouteConfigName(), nil
		}
	}
	return "", fmt.Errorf("no listener on port %d serves host %s by SNI (listeners: %v)", gatewayPort, host, listenerNames(cfg))
}

// mutualTLS: the gateway presents the endpoint certificate and requires a
// client certificate that the endpoint Secret's ca.crt signed, both from
// the Secret by SDS (Istio names the CA part <secret>-cacert).
func mutualTLS(fc *listenerv3.FilterChain) error {
	ctx := &tlsv3.DownstreamTlsContext{}
	if ts := fc.GetTransportSocket(); ts == nil || ts.GetTypedConfig().UnmarshalTo(ctx) != nil {
		return errors.New("no TLS transport socket")
	}
	if !ctx.GetRequireClientCertificate().GetValue() {
		return errors.New("TLS does not require a client certificate")
	}
	common := ctx.GetCommonTlsContext()
	certs := common.GetTlsCertificateSdsSecretConfigs()
	if len(certs) != 1 || certs[0].GetName() != "kubernetes://"+endpointSecret {
		return fmt.Errorf("serving certificate from %v, want kubernetes://%s", sdsNames(certs), endpointSecret)
	}
	ca := common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName()
	if ca != "kubernetes://"+endpointSecret+"-cacert" {
		return fmt.Errorf("client certificates checked against %q, want kubernetes://%s-cacert", ca, endpointSecret)
	}
	return nil
}

// forwardsClientCert: the listener identifies the runtime by the Cert
// element of X-Forwarded-Client-Cert, which the gateway must set itself
// (a client's own header dropped).
func forwardsClientCert(m *hcmv3.HttpConnectionManager) error {
	if m == nil {
		return errors.New("no HTTP connection manager")
	}
	switch m.GetForwardClientCertDetails() {
	case hcmv3.HttpConnectionManager_SANITIZE_SET, hcmv3.HttpConnectionManager_APPEND_FORWARD:
	default:
		return fmt.Errorf("X-Forwarded-Client-Cert is %s, not set from the client certificate", m.GetForwardClientCertDetails())
	}
	if !m.GetSetCurrentClientCertDetails().GetCert() {
		return errors.New("X-Forwarded-Client-Cert does not carry the client certificate (Cert)")
	}
	return nil
}

// watcherRoutes checks that the route configuration sends both event
// paths of w, for host, to w's listener Service and port, which istiod
// knows as a cluster, with the operator's retries.
func watcherRoutes(cfg *harness.ProxyConfig, routeName, host string, w *v1beta2.Watcher) error {
	rc := cfg.Routes[routeName]
	if rc == nil {
		return fmt.Errorf("istiod sent no route configuration %q", routeName)
	}
	svc := w.Spec.ServiceInfo
	want := fmt.Sprintf("outbound|%d||%s.%s.svc.cluster.local", svc.Port, svc.Name, svc.Namespace)
	if cfg.Clusters[want] == nil {
		return fmt.Errorf("istiod knows no cluster %s (the Watcher's Service and port)", want)
	}
	for _, path := range []string{"/v1/" + w.ManagerName() + "/event", "/v2/" + w.ManagerName() + "/event"} {
		r := routeOf(rc, host, path)
		if r == nil {
			return fmt.Errorf("route configuration %s has no route for %s%s", routeName, host, path)
		}
		if got := r.GetRoute().GetCluster(); got != want {
			return fmt.Errorf("%s%s goes to %q, want %q", host, path, got, want)
		}
		if err := retries(r.GetRoute().GetRetryPolicy()); err != nil {
			return fmt.Errorf("%s%s: %w", host, path, err)
		}
	}
	return nil
}

// routeOf is the route Envoy picks for an exact path on host: the first
// match of the virtual host whose domains hold host.
func routeOf(rc *routev3.RouteConfiguration, host, path string) *routev3.Route {
	for _, vh := range rc.GetVirtualHosts() {
		if !slices.Contains(vh.GetDomains(), host) {
			continue
		}
		for _, r := range vh.GetRoutes() {
			m := r.GetMatch()
			if m.GetPath() == path || (m.GetPrefix() != "" && strings.HasPrefix(path, m.GetPrefix())) {
				return r
			}
		}
	}
	return nil
}

func retries(p *routev3.RetryPolicy) error {
	if p == nil {
		return errors.New("no retry policy")
	}
	if p.GetNumRetries().GetValue() != eventRetry.attempts {
		return fmt.Errorf("%d retries, want %d", p.GetNumRetries().GetValue(), eventRetry.attempts)
	}
	if d := p.GetPerTryTimeout().AsDuration(); d != eventRetry.perTry {
		return fmt.Errorf("per-try timeout %v, want %v", d, eventRetry.perTry)
	}
	on := strings.Split(p.GetRetryOn(), ",")
	for _, cond := range eventRetry.retryOn {
		if !slices.Contains(on, cond) {
			return fmt.Errorf("retry on %q lacks %s", p.GetRetryOn(), cond)
		}
	}
	for _, code := range eventRetry.retryCodes {
		if !slices.Contains(on, "retriable-status-codes") || !slices.Contains(p.GetRetriableStatusCodes(), code) {
			return fmt.Errorf("retry on %q with codes %v does not retry %d", p.GetRetryOn(), p.GetRetriableStatusCodes(), code)
		}
	}
	return nil
}

func listenerNames(cfg *harness.ProxyConfig) []string {
	out := make([]string, 0, len(cfg.Listeners))
	for n := range cfg.Listeners {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func sdsNames(cs []*tlsv3.SdsSecretConfig) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.GetName())
	}
	return out
}
