package conversion

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/lifecycle-manager/api/v1beta1"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// Scheme holds both versions of the converted kinds.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := errors.Join(v1beta1.AddToScheme(s), v1beta2.AddToScheme(s)); err != nil {
		return nil, fmt.Errorf("building the conversion scheme: %w", err)
	}
	return s, nil
}

// Certificate is the webhook's serving certificate: empty until the first
// Set, and replaced while the server runs.
type Certificate struct {
	kp     tlsreload.KeyPair
	loaded atomic.Bool
}

var errNoCertificate = errors.New("the conversion webhook has no serving certificate yet")

// Set loads m's certificate and key, and reports whether they changed.
func (c *Certificate) Set(m tlssecret.Material) (bool, error) {
	changed, err := c.kp.Set(m.Cert, m.Key)
	if err != nil {
		return false, fmt.Errorf("loading the webhook certificate: %w", err)
	}
	c.loaded.Store(true)
	return changed, nil
}

// Loaded reports whether a certificate was set.
func (c *Certificate) Loaded() bool { return c.loaded.Load() }

// GetCertificate is a tls.Config.GetCertificate: until a certificate is
// set, handshakes fail and so do v1beta1 requests (nothing is pruned).
func (c *Certificate) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if !c.loaded.Load() {
		return nil, errNoCertificate
	}
	return c.kp.GetCertificate(hello)
}

// NewServer is the webhook server on addr (host:port), with cert, that
// answers ConversionReviews at Path. Add it to a manager to run it: it
// runs on every replica.
func NewServer(addr string, cert *Certificate) (webhook.Server, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--webhook-bind-address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("--webhook-bind-address %q: want a port 1-65535", addr)
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	srv := webhook.NewServer(webhook.Options{
		Host: host,
		Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = cert.GetCertificate
			c.MinVersion = tls.VersionTLS12
		}},
	})
	registry, err := newRegistry()
	if err != nil {
		return nil, err
	}
	srv.Register(Path, crconversion.NewWebhookHandler(scheme, registry))
	return srv, nil
}
