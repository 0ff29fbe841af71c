package tlsreload

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lifecycle-manager/certs/pki"
)

// KeyPair is a certificate with its key that can be replaced at any time.
type KeyPair struct {
	cur atomic.Pointer[keyPairState]
}

type keyPairState struct {
	cert     *tls.Certificate
	certPEM  []byte
	keyPEM   []byte
	notAfter time.Time
}

// NewKeyPair parses a certificate chain and its key.
func NewKeyPair(certPEM, keyPEM []byte) (*KeyPair, error) {
	kp := &KeyPair{}
	if _, err := kp.Set(certPEM, keyPEM); err != nil {
		return nil, err
	}
	return kp, nil
}

// Set replaces the pair and reports whether it changed. Invalid input (bad
// PEM, a key that does not match) is rejected and the current pair kept.
func (kp *KeyPair) Set(certPEM, keyPEM []byte) (bool, error) {
	if old := kp.cur.Load(); old != nil && bytes.Equal(old.certPEM, certPEM) && bytes.Equal(old.keyPEM, keyPEM) {
		return false, nil
	}
	certs, err := pki.ParseCerts(certPEM)
	if err != nil {
		return false, fmt.Errorf("certificate: %w", err)
	}
	key, err := pki.ParseKey(keyPEM)
	if err != nil {
		return false, fmt.Errorf("key: %w", err)
	}
	if err := pki.KeyMatches(certs[0], key); err != nil {
		return false, err
	}
	tc := &tls.Certificate{PrivateKey: key, Leaf: certs[0]}
	for _, c := range certs {
		tc.Certificate = append(tc.Certificate, c.Raw)
	}
	kp.cur.Store(&keyPairState{
		cert: tc, certPEM: bytes.Clone(certPEM), keyPEM: bytes.Clone(keyPEM), notAfter: certs[0].NotAfter,
	})
	return true, nil
}

// Certificate returns the current certificate.
func (kp *KeyPair) Certificate() *tls.Certificate { return kp.cur.Load().cert }

// Leaf returns the current leaf certificate.
func (kp *KeyPair) Leaf() *x509.Certificate { return kp.cur.Load().cert.Leaf }

// GetCertificate is a tls.Config.GetCertificate.
func (kp *KeyPair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return kp.Certificate(), nil
}

// GetClientCertificate is a tls.Config.GetClientCertificate.
func (kp *KeyPair) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return kp.Certificate(), nil
}

// Bundle is a set of trusted CA certificates that can be replaced at any time.
type Bundle struct {
	cur atomic.Pointer[bundleState]
}

type bundleState struct {
	pem   []byte
	pool  *x509.CertPool
	certs []*x509.Certificate
}

// NewBundle parses a PEM bundle of one or more CA certificates.
func NewBundle(pemData []byte) (*Bundle, error) {
	b := &Bundle{}
	if _, err := b.Set(pemData); err != nil {
		return nil, err
	}
	return b, nil
}

// Set replaces the bundle and reports whether it changed. A bundle without
// certificates, or with one that does not parse, is rejected and the current
// one kept: an empty trust store would lock every client out.
func (b *Bundle) Set(pemData []byte) (bool, error) {
	if old := b.cur.Load(); old != nil && bytes.Equal(old.pem, pemData) {
		return false, nil
	}
	certs, err := pki.ParseCerts(pemData)
	if err != nil {
		return false, fmt.Errorf("CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	b.cur.Store(&bundleState{pem: bytes.Clone(pemData), pool: pool, certs: certs})
	return true, nil
}

// Pool returns the current trust pool.
func (b *Bundle) Pool() *x509.CertPool { return b.cur.Load().pool }

// Certificates returns the CA certificates of the current bundle.
func (b *Bundle) Certificates() []*x509.Certificate { return b.cur.Load().certs }

// ErrUntrusted marks a certificate that does not chain to the bundle.
var ErrUntrusted = errors.New("certificate is not trusted")

// Verify checks that chain[0] chains to the bundle (through chain[1:] as
// intermediates), is valid at now and may be used for usage. It returns the
// leaf.
func (b *Bundle) Verify(chain []*x509.Certificate, usage x509.ExtKeyUsage, now time.Time) (*x509.Certificate, error) {
	if len(chain) == 0 {
		return nil, fmt.Errorf("%w: no certificate", ErrUntrusted)
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: b.Pool(), Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}}
	if _, err := chain[0].Verify(opts); err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrUntrusted, chain[0].Subject.CommonName, err)
	}
	return chain[0], nil
}
