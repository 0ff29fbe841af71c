package builtin

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// The keys of the CA Secret.
const (
	CertKey         = tlssecret.CertKey
	KeyKey          = tlssecret.KeyKey
	PreviousCertKey = "previous.crt"
	PreviousKeyKey  = "previous.key"
	// PurposeCA is the value of shared.PurposeLabel on the CA Secret.
	PurposeCA = "ca"
)

var errNoCA = errors.New("no CA secret")

// caStore reads and writes the CA Secret and caches the parsed CAs by
// resourceVersion: parsing RSA keys on every Ensure would cost milliseconds.
type caStore struct {
	c   client.Client
	key types.NamespacedName

	mu      sync.Mutex
	version string
	cas     []*pki.CA
}

// load returns the CAs, newest first; errNoCA when the Secret is missing.
func (s *caStore) load(ctx context.Context) ([]*pki.CA, *corev1.Secret, error) {
	var secret corev1.Secret
	if err := s.c.Get(ctx, s.key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("%s: %w", s.key, errNoCA)
		}
		return nil, nil, fmt.Errorf("reading CA secret %s: %w", s.key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version != "" && s.version == secret.ResourceVersion {
		return s.cas, &secret, nil
	}
	cas, err := parseCAs(secret.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("CA secret %s: %w", s.key, err)
	}
	s.version, s.cas = secret.ResourceVersion, cas
	return cas, &secret, nil
}

func parseCAs(data map[string][]byte) ([]*pki.CA, error) {
	newest, err := pki.ParseCA(data[CertKey], data[KeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", CertKey, KeyKey, err)
	}
	cas := []*pki.CA{newest}
	if len(data[PreviousCertKey]) == 0 && len(data[PreviousKeyKey]) == 0 {
		return cas, nil
	}
	previous, err := pki.ParseCA(data[PreviousCertKey], data[PreviousKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", PreviousCertKey, PreviousKeyKey, err)
	}
	return append(cas, previous), nil
}

func newCA(alg pki.KeyAlgorithm, now time.Time, duration time.Duration) (*pki.CA, []byte, []byte, error) {
	key, err := pki.GenerateKey(alg)
	if err != nil {
		return nil, nil, nil, err
	}
	// The date makes CAs of successive rotations tell apart in tools and logs.
	ca, err := pki.NewCA("lifecycle-manager push CA "+now.UTC().Format("2006-01-02T15:04:05Z"), key, now, duration)
	if err != nil {
		return nil, nil, nil, err
	}
	certPEM, keyPEM, err := ca.PEM()
	if err != nil {
		return nil, nil, nil, err
	}
	return ca, certPEM, keyPEM, nil
}

// create writes the first CA.
func (s *caStore) create(ctx context.Context, alg pki.KeyAlgorithm, now time.Time, d time.Duration) (*x509.Certificate, error) {
	ca, certPEM, keyPEM, err := newCA(alg, now, d)
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.key.Name, Namespace: s.key.Namespace,
			Labels: map[string]string{shared.PurposeLabel: PurposeCA, shared.ManagedByLabel: shared.OperatorName},
		},
		Data: map[string][]byte{CertKey: certPEM, KeyKey: keyPEM},
	}
	if err := s.c.Create(ctx, secret); err != nil {
		return nil, fmt.Errorf("creating CA secret %s: %w", s.key, err)
	}
	return ca.Cert, nil
}

// rotate makes a new CA the newest and keeps the current one as previous.
func (s *caStore) rotate(ctx context.Context, alg pki.KeyAlgorithm, now time.Time, d time.Duration) (*x509.Certificate, error) {
	_, secret, err := s.load(ctx) // refuses to rotate away from a CA that does not parse
	if errors.Is(err, errNoCA) {
		return s.create(ctx, alg, now, d)
	}
	if err != nil {
		return nil, err
	}
	ca, certPEM, keyPEM, err := newCA(alg, now, d)
	if err != nil {
		return nil, err
	}
	secret.Data = map[string][]byte{
		PreviousCertKey: secret.Data[CertKey], PreviousKeyKey: secret.Data[KeyKey],
		CertKey: certPEM, KeyKey: keyPEM,
	}
	if err := s.c.Update(ctx, secret); err != nil {
		return nil, fmt.Errorf("storing new CA in %s: %w", s.key, err)
	}
	return ca.Cert, nil
}

// signer returns the CA whose certificate is target; when its key is gone
// (the Secret was lost and re-created), the newest CA.
func (s *caStore) signer(ctx context.Context, target *x509.Certificate) (*pki.CA, error) {
	cas, _, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	for _, ca := range cas {
		if target != nil && ca.Cert.Equal(target) {
			return ca, nil
		}
	}
	return cas[0], nil
}
