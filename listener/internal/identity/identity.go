package identity

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/listener/internal/xfcc"
)

// Identifier returns the runtime ID of the caller of a request, or a
// *Failure.
type Identifier interface {
	Identify(r *http.Request) (string, error)
}

// Direct identifies callers by the client certificate of their TLS
// connection. The handshake already verified it (see ObserveHandshakes);
// Direct verifies it again, mostly from the cache, so that a certificate
// that expires or a CA that leaves the bundle also ends access on
// keep-alive connections that were opened before.
type Direct struct {
	v *Verifier
}

// NewDirect returns a Direct identifier checking with v.
func NewDirect(v *Verifier) *Direct { return &Direct{v: v} }

// Identify implements Identifier.
func (d *Direct) Identify(r *http.Request) (string, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", fail(ReasonNoCertificate, "no client certificate on the connection")
	}
	chain := r.TLS.PeerCertificates
	// The leaf identifies the verdict: whatever intermediates come with
	// it, the same leaf bytes are the same certificate.
	return d.v.VerifyDER(chain[0].Raw, func() ([]*x509.Certificate, error) { return chain, nil })
}

// ObserveHandshakes adjusts a server config of tlsreload.ServerConfig so
// that a handshake without a client certificate also reaches its
// VerifyConnection (which rejects it), and reports the reason of every
// rejected handshake to onFailure. A rejected handshake ends the
// connection with a TLS alert: there is no HTTP answer to count.
func ObserveHandshakes(cfg *tls.Config, onFailure func(reason string)) {
	verify := cfg.VerifyConnection
	if verify == nil {
		return
	}
	cfg.ClientAuth = tls.RequestClientCert
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			onFailure(ReasonNoCertificate)
			return errors.New("tls: a client certificate is required")
		}
		err := verify(cs)
		if err != nil {
			onFailure(Reason(err))
		}
		return err
	}
}

// Gateway identifies callers by the X-Forwarded-Client-Cert header that a
// proxy in front of the listener (the Istio gateway) sets after it
// terminated mTLS. The header is believed only from TrustedProxies, and
// its certificate is verified against the bundle all the same.
//
// Which element: a proxy appends its element to whatever the client sent,
// so the last element is the gateway's and earlier ones may be forged by
// the client. Element counts from the end (1, the last, by default); use 2
// when one more proxy, such as a mesh sidecar between gateway and
// listener, appends its own element after the gateway's.
type Gateway struct {
	v       *Verifier
	proxies []netip.Prefix
	element int
}

// NewGateway returns a Gateway identifier. element <= 0 means 1.
func NewGateway(v *Verifier, trustedProxies []netip.Prefix, element int) (*Gateway, error) {
	if len(trustedProxies) == 0 {
		return nil, errors.New("gateway mode needs at least one trusted proxy network")
	}
	for _, p := range trustedProxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("invalid trusted proxy network %v", p)
		}
	}
	if element <= 0 {
		element = 1
	}
	return &Gateway{v: v, proxies: trustedProxies, element: element}, nil
}

// Identify implements Identifier.
func (g *Gateway) Identify(r *http.Request) (string, error) {
	if err := g.checkPeer(r.RemoteAddr); err != nil {
		return "", err
	}
	values := r.Header.Values(xfcc.Header)
	if len(values) == 0 {
		return "", fail(ReasonNoCertificate, "no %s header", xfcc.Header)
	}
	// Several header lines are one list, in order (RFC 9110, 5.3).
	els, err := xfcc.Parse(strings.Join(values, ","))
	if err != nil {
		return "", &Failure{Reason: ReasonMalformedXFCC, Err: err}
	}
	if len(els) < g.element {
		return "", fail(ReasonNoCertificate, "%s has %d elements, the gateway's is number %d from the end",
			xfcc.Header, len(els), g.element)
	}
	el := els[len(els)-g.element]
	cert, _ := el.Get(xfcc.KeyCert)
	chain, _ := el.Get(xfcc.KeyChain)
	// Cert alone identifies the verdict, like the leaf in direct mode; a
	// Chain alone starts with the leaf and decodes as Cert would.
	material := cert
	if cert == "" {
		material = chain
	}
	if material == "" {
		return "", fail(ReasonNoCertificate, "the gateway's %s element carries no Cert or Chain", xfcc.Header)
	}
	return g.v.Verify(material, func() ([]*x509.Certificate, error) {
		return decodeChain(cert, chain)
	})
}

func (g *Gateway) checkPeer(remoteAddr string) error {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return fail(ReasonUntrustedProxy, "peer address %q: %w", remoteAddr, err)
	}
	ip := ap.Addr().Unmap()
	for _, p := range g.proxies {
		if p.Contains(ip) {
			return nil
		}
	}
	return fail(ReasonUntrustedProxy, "%s is not a trusted proxy", ip)
}

// decodeChain reads the URL-encoded PEM of Cert (the client's certificate)
// and Chain (its whole chain, leaf first); either may be empty.
func decodeChain(cert, chain string) ([]*x509.Certificate, error) {
	var leaf, rest []*x509.Certificate
	var err error
	if cert != "" {
		if leaf, err = decodePEM(cert); err != nil {
			return nil, fmt.Errorf("%s Cert: %w", xfcc.Header, err)
		}
	}
	if chain != "" {
		if rest, err = decodePEM(chain); err != nil {
			return nil, fmt.Errorf("%s Chain: %w", xfcc.Header, err)
		}
	}
	if len(leaf) == 0 {
		return rest, nil
	}
	for _, c := range rest {
		if !c.Equal(leaf[0]) {
			leaf = append(leaf, c)
		}
	}
	return leaf, nil
}

// decodePEM undoes Envoy's percent-encoding. PathUnescape, unlike
// QueryUnescape, keeps '+' (a base64 character) as it is.
func decodePEM(value string) ([]*x509.Certificate, error) {
	raw, err := url.PathUnescape(value)
	if err != nil {
		return nil, fmt.Errorf("URL decoding: %w", err)
	}
	certs, err := pki.ParseCerts([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("PEM decoding: %w", err)
	}
	return certs, nil
}
