package tlssecret

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
)

// The keys of a TLS Secret on the push path. tls.crt and tls.key are the
// standard keys of a kubernetes.io/tls Secret; ca.crt is the convention of
// cert-manager and Istio for the CA bundle.
const (
	CAKey   = "ca.crt"
	CertKey = corev1.TLSCertKey
	KeyKey  = corev1.TLSPrivateKeyKey
)

// Material is the content of a TLS Secret, all PEM.
type Material struct {
	// CABundle is the trust bundle: every CA certificate the peer may use.
	CABundle []byte
	// Cert is the certificate chain, leaf first.
	Cert []byte
	// Key is the private key of the leaf.
	Key []byte
}

// FromData reads Material from Secret data and validates it.
func FromData(data map[string][]byte) (Material, error) {
	m := Material{CABundle: data[CAKey], Cert: data[CertKey], Key: data[KeyKey]}
	if err := m.Validate(); err != nil {
		return Material{}, err
	}
	return m, nil
}

// FromSecret reads Material from a Secret and validates it; errors name the Secret.
func FromSecret(s *corev1.Secret) (Material, error) {
	m, err := FromData(s.Data)
	if err != nil {
		return Material{}, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return m, nil
}

// Read gets a Secret and returns its validated Material.
func Read(ctx context.Context, c client.Reader, key types.NamespacedName) (Material, error) {
	var s corev1.Secret
	if err := c.Get(ctx, key, &s); err != nil {
		return Material{}, fmt.Errorf("reading secret %s: %w", key, err)
	}
	return FromSecret(&s)
}

// Validate checks that every part is present and parses, and that the key
// belongs to the certificate.
func (m Material) Validate() error {
	var missing []string
	for _, part := range []struct {
		key  string
		data []byte
	}{{CAKey, m.CABundle}, {CertKey, m.Cert}, {KeyKey, m.Key}} {
		if len(part.data) == 0 {
			missing = append(missing, part.key)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %v", missing)
	}
	if _, err := pki.ParseCerts(m.CABundle); err != nil {
		return fmt.Errorf("%s: %w", CAKey, err)
	}
	if _, err := tlsreload.NewKeyPair(m.Cert, m.Key); err != nil {
		return fmt.Errorf("%s and %s: %w", CertKey, KeyKey, err)
	}
	return nil
}

// Data returns the Material as Secret data.
func (m Material) Data() map[string][]byte {
	return map[string][]byte{CAKey: m.CABundle, CertKey: m.Cert, KeyKey: m.Key}
}

// Equal reports whether both hold the same bytes.
func (m Material) Equal(o Material) bool {
	return bytes.Equal(m.CABundle, o.CABundle) && bytes.Equal(m.Cert, o.Cert) && bytes.Equal(m.Key, o.Key)
}

// IsZero reports whether the Material holds nothing.
func (m Material) IsZero() bool {
	return len(m.CABundle) == 0 && len(m.Cert) == 0 && len(m.Key) == 0
}

// Hash is a SHA-256 over the three parts, hex encoded. Each part is length
// prefixed, so that bytes moving from one part to the next change the hash.
func (m Material) Hash() string {
	h := sha256.New()
	for _, part := range [][]byte{m.CABundle, m.Cert, m.Key} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Leaf parses the leaf certificate.
func (m Material) Leaf() (*x509.Certificate, error) {
	certs, err := pki.ParseCerts(m.Cert)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CertKey, err)
	}
	return certs[0], nil
}

// KeyPair loads the certificate and key into a reloadable tlsreload.KeyPair.
func (m Material) KeyPair() (*tlsreload.KeyPair, error) {
	kp, err := tlsreload.NewKeyPair(m.Cert, m.Key)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", CertKey, KeyKey, err)
	}
	return kp, nil
}

// Bundle loads the trust bundle into a reloadable tlsreload.Bundle.
func (m Material) Bundle() (*tlsreload.Bundle, error) {
	if len(m.CABundle) == 0 {
		return nil, errors.New("no " + CAKey)
	}
	return tlsreload.NewBundle(m.CABundle)
}

// UpdateReloadable sets kp and b to the Material, for servers and clients
// that read Secrets instead of mounted files. Either may be nil. Invalid
// Material changes neither; it reports whether anything changed.
func (m Material) UpdateReloadable(kp *tlsreload.KeyPair, b *tlsreload.Bundle) (bool, error) {
	if err := m.Validate(); err != nil {
		return false, err
	}
	changed := false
	if kp != nil {
		c, err := kp.Set(m.Cert, m.Key)
		if err != nil {
			return false, err
		}
		changed = c
	}
	if b != nil {
		c, err := b.Set(m.CABundle)
		if err != nil {
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
}
