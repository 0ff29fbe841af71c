package tlsreload

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// ServerConfig returns a TLS 1.2+ server config that presents the current
// certificate of kp. With clientCAs, it requires a client certificate that
// chains to the current bundle; the check runs on every handshake, resumed
// ones included, so a CA removed from the bundle locks its clients out at
// their next connection.
func ServerConfig(kp *KeyPair, clientCAs *Bundle) *tls.Config {
	cfg := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: kp.GetCertificate,
		// GetConfigForClient is not used, so http.Server can still add h2.
		NextProtos: []string{"h2", "http/1.1"},
	}
	if clientCAs != nil {
		// RequireAnyClientCert plus our own check instead of ClientCAs: the
		// pool of ClientCAs is fixed per Config, ours follows the bundle.
		cfg.ClientAuth = tls.RequireAnyClientCert
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			_, err := clientCAs.Verify(cs.PeerCertificates, x509.ExtKeyUsageClientAuth, time.Now())
			return err
		}
	}
	return cfg
}

// ClientConfig returns a TLS 1.2+ client config that verifies the server
// against the current roots and, with kp, presents its current certificate.
// serverName is the DNS name or IP address to verify. When empty, the name
// sent in SNI is used, which works for DNS names only: TLS sends no SNI for
// an IP address, so pass the address here when dialling one.
func ClientConfig(kp *KeyPair, roots *Bundle, serverName string) *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: serverName,
		// The standard verification reads RootCAs, which is fixed per Config;
		// VerifyConnection below does the same checks against the current
		// bundle, for every handshake.
		InsecureSkipVerify: true, //nolint:gosec // verification is done in VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			name := serverName
			if name == "" {
				name = cs.ServerName
			}
			return verifyServer(roots, cs.PeerCertificates, name, time.Now())
		},
	}
	if kp != nil {
		cfg.GetClientCertificate = kp.GetClientCertificate
	}
	return cfg
}

func verifyServer(roots *Bundle, chain []*x509.Certificate, name string, now time.Time) error {
	if name == "" {
		return errors.New("tls: no server name to verify the server certificate against")
	}
	leaf, err := roots.Verify(chain, x509.ExtKeyUsageServerAuth, now)
	if err != nil {
		return fmt.Errorf("tls: server certificate: %w", err)
	}
	if err := leaf.VerifyHostname(name); err != nil {
		return fmt.Errorf("tls: server certificate: %w", err)
	}
	return nil
}
