package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Signer signs descriptors with one key.
type Signer struct {
	// Name is the name of the signatures it writes.
	Name  string
	key   crypto.Signer
	chain []*x509.Certificate
}

// NewSigner reads a private key (PEM) and, optionally, the certificate
// chain of its public key (PEM, leaf first). The certificate must belong
// to the key, allow code signing and be valid at now: a module signed
// with an expired certificate would be refused wherever it is checked.
func NewSigner(name string, keyPEM, certPEM []byte, now time.Time) (*Signer, error) {
	if name == "" {
		name = DefaultName
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	s := &Signer{Name: name, key: key}
	if len(certPEM) == 0 {
		return s, nil
	}
	if s.chain, err = parseCertificates(certPEM); err != nil {
		return nil, fmt.Errorf("signing certificate: %w", err)
	}
	leaf := s.chain[0]
	switch {
	case !sameKey(key.Public(), leaf.PublicKey):
		return nil, fmt.Errorf("signing certificate %q is not the certificate of the signing key (the first certificate of the file must be)", leaf.Subject)
	case now.Before(leaf.NotBefore):
		return nil, fmt.Errorf("signing certificate %q is valid only from %s", leaf.Subject, leaf.NotBefore.UTC().Format(time.RFC3339))
	case now.After(leaf.NotAfter):
		return nil, fmt.Errorf("signing certificate %q expired on %s", leaf.Subject, leaf.NotAfter.UTC().Format(time.RFC3339))
	case !allowsCodeSigning(leaf):
		return nil, fmt.Errorf("signing certificate %q does not allow code signing (its key usage)", leaf.Subject)
	}
	return s, nil
}

// Identity names the signer for people: the certificate's subject, else
// the key's fingerprint.
func (s *Signer) Identity() string {
	if len(s.chain) > 0 {
		return s.chain[0].Subject.String()
	}
	return "key " + Fingerprint(s.key.Public())
}

// Sign returns the signature of a descriptor (JSON or YAML); signatures
// it already has are not signed.
func (s *Signer) Sign(doc []byte) (Signature, error) {
	d, err := DigestOf(doc)
	if err != nil {
		return Signature{}, err
	}
	sum, err := hex.DecodeString(d.Value)
	if err != nil {
		return Signature{}, fmt.Errorf("digest: %w", err)
	}
	var raw []byte
	var algorithm string
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		// A nil random source makes the signature deterministic (RFC 6979):
		// publishing the same module again gives the same descriptor.
		raw, err = k.Sign(nil, sum, crypto.SHA256)
		algorithm = AlgorithmECDSA
	case ed25519.PrivateKey:
		raw, err = k.Sign(nil, sum, crypto.Hash(0))
		algorithm = AlgorithmEd25519
	default:
		return Signature{}, errors.New("the signing key is neither ECDSA nor Ed25519")
	}
	if err != nil {
		return Signature{}, fmt.Errorf("signing: %w", err)
	}
	v := Value{Algorithm: algorithm, Value: hex.EncodeToString(raw), MediaType: MediaTypeHex}
	if len(s.chain) > 0 {
		v.Certificate = encodeCertificates(s.chain)
	}
	return Signature{Name: s.Name, Digest: d, Signature: v}, nil
}
