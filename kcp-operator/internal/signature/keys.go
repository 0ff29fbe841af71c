package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// parsePrivateKey reads the first private key of a PEM document: PKCS #8
// (PRIVATE KEY) or SEC 1 (EC PRIVATE KEY); ECDSA or Ed25519.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		switch block.Type {
		case "EC PRIVATE KEY":
			k, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("EC PRIVATE KEY: %w", err)
			}
			return k, nil
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("PRIVATE KEY: %w", err)
			}
			switch k := k.(type) {
			case *ecdsa.PrivateKey:
				return k, nil
			case ed25519.PrivateKey:
				return k, nil
			default:
				return nil, fmt.Errorf("a %T key: want ECDSA or Ed25519", k)
			}
		case "RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			return nil, fmt.Errorf("%s is not supported: want an unencrypted ECDSA or Ed25519 key (PRIVATE KEY or EC PRIVATE KEY)", block.Type)
		}
	}
	return nil, errors.New("no PEM private key (PRIVATE KEY or EC PRIVATE KEY) found")
}

// parseCertificates reads every CERTIFICATE block of a PEM document.
func parseCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM CERTIFICATE found")
	}
	return certs, nil
}

func encodeCertificates(certs []*x509.Certificate) string {
	var b strings.Builder
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}) // a strings.Builder does not fail
	}
	return b.String()
}

// algorithmOf is the signature algorithm of a public key.
func algorithmOf(pub crypto.PublicKey) (string, error) {
	switch pub.(type) {
	case *ecdsa.PublicKey:
		return AlgorithmECDSA, nil
	case ed25519.PublicKey:
		return AlgorithmEd25519, nil
	default:
		return "", fmt.Errorf("a %T key: want ECDSA or Ed25519", pub)
	}
}

// Fingerprint names a public key: the start of the SHA-256 of its PKIX form.
func Fingerprint(pub crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "unknown key"
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

func sameKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// allowsCodeSigning reports whether a certificate may sign code: it
// names no extended key usage, or code signing, or any.
func allowsCodeSigning(c *x509.Certificate) bool {
	if len(c.ExtKeyUsage) == 0 && len(c.UnknownExtKeyUsage) == 0 {
		return c.KeyUsage == 0 || c.KeyUsage&x509.KeyUsageDigitalSignature != 0
	}
	return slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageCodeSigning) || slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageAny)
}
