package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// KeyAlgorithm names the kind of private key to generate.
type KeyAlgorithm string

// Supported key algorithms. ECDSA P-256 is the default: small, fast to sign
// and verify, and accepted by every TLS stack the push path meets.
const (
	ECDSAP256 KeyAlgorithm = "ecdsa-p256"
	RSA2048   KeyAlgorithm = "rsa-2048"
	RSA4096   KeyAlgorithm = "rsa-4096"
)

// ParseKeyAlgorithm accepts the flag spellings of the algorithms.
func ParseKeyAlgorithm(s string) (KeyAlgorithm, error) {
	switch a := KeyAlgorithm(s); a {
	case ECDSAP256, RSA2048, RSA4096:
		return a, nil
	case "":
		return ECDSAP256, nil
	default:
		return "", fmt.Errorf("unknown key algorithm %q: want one of %s, %s, %s", s, ECDSAP256, RSA2048, RSA4096)
	}
}

// GenerateKey returns a new private key of the algorithm.
func GenerateKey(alg KeyAlgorithm) (crypto.Signer, error) {
	var (
		key crypto.Signer
		err error
	)
	switch alg {
	case ECDSAP256, "":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA2048:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case RSA4096:
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	default:
		return nil, fmt.Errorf("unknown key algorithm %q", alg)
	}
	if err != nil {
		return nil, fmt.Errorf("generating %s key: %w", alg, err)
	}
	return key, nil
}

// EncodeKey returns key as a PKCS#8 PEM block.
func EncodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseKey reads the first private key in PEM data: PKCS#8, PKCS#1 (RSA) or SEC 1 (EC).
func ParseKey(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no private key found in PEM data")
		}
		switch block.Type {
		case "PRIVATE KEY":
			key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing PKCS#8 private key: %w", err)
			}
			signer, ok := key.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("private key of type %T cannot sign", key)
			}
			return signer, nil
		case "RSA PRIVATE KEY":
			key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing RSA private key: %w", err)
			}
			return key, nil
		case "EC PRIVATE KEY":
			key, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parsing EC private key: %w", err)
			}
			return key, nil
		}
	}
}
