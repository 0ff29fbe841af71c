package signature

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Trust holds the anchors signatures are checked against.
type Trust struct {
	// Source names where the anchors come from, for messages (a Secret,
	// the --trust files).
	Source string
	keys   []trustedKey
	roots  *x509.CertPool
	cas    int
}

type trustedKey struct {
	entry string
	key   crypto.PublicKey
}

// ParseTrust reads trust anchors from named PEM documents (the keys of a
// Secret, or files): PUBLIC KEY blocks (ECDSA or Ed25519) are trusted
// keys, CERTIFICATE blocks trusted CAs. Anything else is an error that
// names the entry, as is an empty set: a typo must not pass as "trust
// nothing".
func ParseTrust(source string, entries map[string][]byte) (*Trust, error) {
	t := &Trust{Source: source, roots: x509.NewCertPool()}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if err := t.add(name, entries[name]); err != nil {
			return nil, fmt.Errorf("%s, %s: %w", source, name, err)
		}
	}
	if len(t.keys) == 0 && t.cas == 0 {
		return nil, fmt.Errorf("%s holds no PEM public key or CA certificate", source)
	}
	return t, nil
}

func (t *Trust) add(name string, data []byte) error {
	found := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		found++
		switch block.Type {
		case "PUBLIC KEY":
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return fmt.Errorf("PUBLIC KEY: %w", err)
			}
			if _, err := algorithmOf(pub); err != nil {
				return err
			}
			t.keys = append(t.keys, trustedKey{entry: name, key: pub})
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return fmt.Errorf("CERTIFICATE: %w", err)
			}
			t.roots.AddCert(c)
			t.cas++
		default:
			return fmt.Errorf("a PEM %s block: want PUBLIC KEY or CERTIFICATE", block.Type)
		}
	}
	if found == 0 {
		return errors.New("no PEM block: want PUBLIC KEY or CERTIFICATE blocks")
	}
	return nil
}

// Describe says what the anchors are, for messages.
func (t *Trust) Describe() string {
	return fmt.Sprintf("%d key(s) and %d CA(s) of %s", len(t.keys), t.cas, t.Source)
}
