package pki_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/lifecycle-manager/certs/pki"
)

// keySeeds are private keys of every algorithm in every encoding ParseKey
// reads, generated once for the seed corpus.
func keySeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, alg := range []pki.KeyAlgorithm{pki.ECDSAP256, pki.RSA2048} {
		key, err := pki.GenerateKey(alg)
		if err != nil {
			f.Fatal(err)
		}
		pkcs8, err := pki.EncodeKey(key)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, pkcs8)
		switch k := key.(type) {
		case *rsa.PrivateKey:
			seeds = append(seeds, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
		case *ecdsa.PrivateKey:
			der, err := x509.MarshalECPrivateKey(k)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
		}
	}
	return seeds
}

// FuzzParseKey: key PEM comes from Secrets (the CA key, agents' keys). A
// key ParseKey accepts can sign, with a signature its public key verifies,
// and survives EncodeKey and ParseKey unchanged.
func FuzzParseKey(f *testing.F) {
	for _, s := range keySeeds(f) {
		f.Add(s)
	}
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := pki.ParseKey(data)
		if err != nil {
			return
		}
		digest := sha256.Sum256([]byte("lifecycle-manager"))
		sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
		if err != nil {
			t.Fatalf("accepted a %T that cannot sign: %v", key, err)
		}
		if !verifies(key.Public(), digest[:], sig) {
			t.Fatalf("accepted a %T whose public key does not verify its signature", key)
		}
		encoded, err := pki.EncodeKey(key)
		if err != nil {
			t.Fatalf("accepted a %T that does not encode: %v", key, err)
		}
		again, err := pki.ParseKey(encoded)
		if err != nil {
			t.Fatalf("re-encoded key rejected: %v", err)
		}
		type equaler interface{ Equal(crypto.PublicKey) bool }
		if !again.Public().(equaler).Equal(key.Public()) {
			t.Fatal("re-encoded key has another public key")
		}
	})
}

func verifies(pub crypto.PublicKey, digest, sig []byte) bool {
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(p, digest, sig)
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(p, crypto.SHA256, digest, sig) == nil
	default:
		return true // other kinds (ed25519) sign messages, not digests; Sign succeeding is the check
	}
}

// FuzzParseCerts: certificate PEM comes from Secrets and, percent-decoded,
// from the gateway's header. What ParseCerts accepts is every CERTIFICATE
// block of the input, in order, and survives EncodeCerts and ParseCerts
// unchanged.
func FuzzParseCerts(f *testing.F) {
	ca := newCAForFuzz(f)
	f.Add(pki.EncodeCerts(ca.Cert))
	f.Add(append(append(pki.EncodeCerts(ca.Cert), []byte("junk between\n")...), pki.EncodeCerts(ca.Cert)...))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		certs, err := pki.ParseCerts(data)
		if err != nil {
			return
		}
		if n := countCertBlocks(data); len(certs) != n || n == 0 {
			t.Fatalf("%d certificates from %d CERTIFICATE blocks", len(certs), n)
		}
		again, err := pki.ParseCerts(pki.EncodeCerts(certs...))
		if err != nil {
			t.Fatalf("re-encoded certificates rejected: %v", err)
		}
		for i := range certs {
			if !bytes.Equal(certs[i].Raw, again[i].Raw) {
				t.Fatalf("certificate %d changed in the round trip", i)
			}
		}
	})
}

func countCertBlocks(data []byte) int {
	n := 0
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return n
		}
		if block.Type == "CERTIFICATE" {
			n++
		}
	}
}

// FuzzParseCA: the CA Secret's certificate and key. A CA ParseCA accepts
// is a CA certificate whose key is the key given.
func FuzzParseCA(f *testing.F) {
	ca := newCAForFuzz(f)
	certPEM, keyPEM, err := ca.PEM()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(certPEM, keyPEM)
	other, err := pki.GenerateKey(pki.ECDSAP256)
	if err != nil {
		f.Fatal(err)
	}
	otherPEM, err := pki.EncodeKey(other)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(certPEM, otherPEM)
	f.Fuzz(func(t *testing.T, certPEM, keyPEM []byte) {
		parsed, err := pki.ParseCA(certPEM, keyPEM)
		if err != nil {
			return
		}
		if !parsed.Cert.IsCA {
			t.Fatal("accepted a certificate that is not a CA")
		}
		if err := pki.KeyMatches(parsed.Cert, parsed.Key); err != nil {
			t.Fatalf("accepted a key that is not the CA's: %v", err)
		}
	})
}

func newCAForFuzz(f *testing.F) *pki.CA {
	f.Helper()
	key, err := pki.GenerateKey(pki.ECDSAP256)
	if err != nil {
		f.Fatal(err)
	}
	ca, err := pki.NewCA("fuzz-ca", key, time.Now().Add(-time.Minute), time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	return ca
}
