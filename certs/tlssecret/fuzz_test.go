package tlssecret_test

import (
	"testing"

	"github.com/lifecycle-manager/certs/tlssecret"
)

// FuzzFromData: Secret data from anywhere never panics, and what passes
// validation loads into the reloadable types.
func FuzzFromData(f *testing.F) {
	good, _ := material(f, "seed")
	f.Add(good.CABundle, good.Cert, good.Key)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), good.Cert, good.Key)
	f.Add([]byte{}, []byte("garbage"), []byte("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, ca, cert, key []byte) {
		m, err := tlssecret.FromData(map[string][]byte{tlssecret.CAKey: ca, tlssecret.CertKey: cert, tlssecret.KeyKey: key})
		if err != nil {
			return
		}
		if _, err := m.KeyPair(); err != nil {
			t.Fatalf("valid material does not load as a key pair: %v", err)
		}
		if _, err := m.Bundle(); err != nil {
			t.Fatalf("valid material does not load as a bundle: %v", err)
		}
		_ = m.Hash()
	})
}
