package pki

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Usage says what a leaf certificate is for.
type Usage int

// Usages; a runtime's agent certificate is both client and server.
const (
	UsageClient Usage = 1 << iota
	UsageServer
)

// CA is a certificate authority that can sign leaf certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// LeafRequest describes a leaf certificate.
type LeafRequest struct {
	// CommonName is the runtime ID for client certificates.
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	Usage      Usage
	NotBefore  time.Time
	Duration   time.Duration
}

// clockSkew backdates certificates so that peers with slightly late clocks accept them.
const clockSkew = 5 * time.Minute

// NewCA creates a self-signed root CA.
func NewCA(commonName string, key crypto.Signer, notBefore time.Time, duration time.Duration) (*CA, error) {
	if commonName == "" {
		return nil, errors.New("a CA needs a common name")
	}
	if duration <= 0 {
		return nil, fmt.Errorf("CA duration must be positive, got %s", duration)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"lifecycle-manager"}},
		NotBefore:             notBefore.Add(-clockSkew),
		NotAfter:              notBefore.Add(duration),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          keyID(key.Public()),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA %q: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing new CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Sign issues a leaf certificate for key.
func (ca *CA) Sign(req LeafRequest, pub crypto.PublicKey) (*x509.Certificate, error) {
	if req.CommonName == "" {
		return nil, errors.New("a leaf certificate needs a common name")
	}
	if req.Duration <= 0 {
		return nil, fmt.Errorf("certificate duration must be positive, got %s", req.Duration)
	}
	if req.Usage == 0 {
		return nil, errors.New("a leaf certificate needs a client or server usage")
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	notAfter := req.NotBefore.Add(req.Duration)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter // a leaf must not outlive its issuer
	}
	tmpl := &x509.Certificate{
		SerialNumber:   serial,
		Subject:        pkix.Name{CommonName: req.CommonName},
		DNSNames:       req.DNSNames,
		IPAddresses:    req.IPs,
		NotBefore:      req.NotBefore.Add(-clockSkew),
		NotAfter:       notAfter,
		KeyUsage:       x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		AuthorityKeyId: ca.Cert.SubjectKeyId,
		SubjectKeyId:   keyID(pub),
	}
	if req.Usage&UsageClient != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if req.Usage&UsageServer != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("signing certificate for %q: %w", req.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing new certificate: %w", err)
	}
	return cert, nil
}

// EncodeCerts returns the certificates as concatenated PEM blocks.
func EncodeCerts(certs ...*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}) // writing to memory cannot fail
	}
	return buf.Bytes()
}

// ParseCerts reads every CERTIFICATE block of PEM data. It fails on data
// without certificates and on blocks that do not parse, naming the block.
func ParseCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for i := 0; ; i++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", i, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate found in PEM data")
	}
	return certs, nil
}

// ParseCA reads a CA from its certificate and key PEM.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	certs, err := ParseCerts(certPEM)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	if !certs[0].IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA", certs[0].Subject.CommonName)
	}
	if err := KeyMatches(certs[0], key); err != nil {
		return nil, err
	}
	return &CA{Cert: certs[0], Key: key}, nil
}

// KeyMatches fails when key is not the private key of cert.
func KeyMatches(cert *x509.Certificate, key crypto.Signer) error {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	pub, ok := key.Public().(equaler)
	if !ok || !pub.Equal(cert.PublicKey) {
		return fmt.Errorf("private key does not match certificate %q", cert.Subject.CommonName)
	}
	return nil
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return serial, nil
}

func keyID(pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return sum[:20]
}

// Issue generates a key of alg and a certificate for it signed by ca, and
// returns both as PEM.
func (ca *CA) Issue(req LeafRequest, alg KeyAlgorithm) (certPEM, keyPEM []byte, err error) {
	key, err := GenerateKey(alg)
	if err != nil {
		return nil, nil, err
	}
	cert, err := ca.Sign(req, key.Public())
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = EncodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return EncodeCerts(cert), keyPEM, nil
}

// PEM returns the CA's certificate and key as PEM.
func (ca *CA) PEM() (certPEM, keyPEM []byte, err error) {
	keyPEM, err = EncodeKey(ca.Key)
	if err != nil {
		return nil, nil, err
	}
	return EncodeCerts(ca.Cert), keyPEM, nil
}
