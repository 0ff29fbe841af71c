package trust

import (
	"context"
	"errors"
	"fmt"
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

// PurposeBundle is the value of shared.PurposeLabel on the bundle Secret.
const PurposeBundle = "ca-bundle"

// The annotations of an emergency rotation on the bundle Secret: when it
// was asked for (RFC 3339) and the fingerprint of the CA it replaces.
const (
	EmergencySinceAnnotation    = shared.OperatorGroup + "/ca-emergency-since"
	EmergencyReplacesAnnotation = shared.OperatorGroup + "/ca-emergency-replaces"
)

// ErrNoBundle is returned by Load before the rotator wrote the first bundle.
var ErrNoBundle = errors.New("no trust bundle yet: the rotator has not run")

// Store reads and writes the bundle Secret.
type Store struct {
	c   client.Client
	key types.NamespacedName
}

// NewStore returns a Store for the bundle Secret key.
func NewStore(c client.Client, key types.NamespacedName) *Store {
	return &Store{c: c, key: key}
}

// Key is the bundle Secret's name.
func (s *Store) Key() types.NamespacedName { return s.key }

// Load reads the bundle. A missing Secret is ErrNoBundle; a Secret that
// does not parse is an error naming it (and is never overwritten).
func (s *Store) Load(ctx context.Context) (State, error) {
	secret, err := s.get(ctx)
	if err != nil {
		return State{}, err
	}
	return parse(secret)
}

func (s *Store) get(ctx context.Context) (*corev1.Secret, error) {
	var secret corev1.Secret
	if err := s.c.Get(ctx, s.key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("secret %s: %w", s.key, ErrNoBundle)
		}
		return nil, fmt.Errorf("reading trust bundle %s: %w", s.key, err)
	}
	return &secret, nil
}

func parse(secret *corev1.Secret) (State, error) {
	cas, err := pki.ParseCerts(secret.Data[tlssecret.CAKey])
	if err != nil {
		return State{}, fmt.Errorf("trust bundle %s/%s, %s: %w", secret.Namespace, secret.Name, tlssecret.CAKey, err)
	}
	st := State{CAs: cas}
	if v := secret.Annotations[shared.CAAddedAtAnnotation]; v != "" {
		// A missing or unreadable time counts as long ago: the rotation is over.
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			st.NewestAddedAt = t
		}
	}
	if v := secret.Annotations[EmergencySinceAnnotation]; v != "" {
		// Unlike the rotation's time, an unreadable emergency is an error:
		// taken as over, it would keep a leaked CA trusted.
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return State{}, fmt.Errorf("trust bundle %s/%s, annotation %s: %w", secret.Namespace, secret.Name, EmergencySinceAnnotation, err)
		}
		st.Emergency = Emergency{Since: t, Replaces: secret.Annotations[EmergencyReplacesAnnotation]}
	}
	return st, nil
}

// Save writes the bundle, creating the Secret when it is missing. It uses
// the resourceVersion it read, so that concurrent writers conflict instead
// of losing a CA.
func (s *Store) Save(ctx context.Context, st State) error {
	if len(st.CAs) == 0 {
		return errors.New("refusing to save an empty trust bundle")
	}
	secret, err := s.get(ctx)
	if errors.Is(err, ErrNoBundle) {
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.key.Name, Namespace: s.key.Namespace}}
		fill(secret, st)
		if err := s.c.Create(ctx, secret); err != nil {
			return fmt.Errorf("creating trust bundle %s: %w", s.key, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	fill(secret, st)
	if err := s.c.Update(ctx, secret); err != nil {
		return fmt.Errorf("updating trust bundle %s: %w", s.key, err)
	}
	return nil
}

func fill(secret *corev1.Secret, st State) {
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	secret.Labels[shared.PurposeLabel] = PurposeBundle
	secret.Labels[shared.ManagedByLabel] = shared.OperatorName
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[shared.CAAddedAtAnnotation] = st.NewestAddedAt.UTC().Format(time.RFC3339)
	delete(secret.Annotations, EmergencySinceAnnotation)
	delete(secret.Annotations, EmergencyReplacesAnnotation)
	if st.Emergency.Active() {
		secret.Annotations[EmergencySinceAnnotation] = st.Emergency.Since.UTC().Format(time.RFC3339Nano)
		secret.Annotations[EmergencyReplacesAnnotation] = st.Emergency.Replaces
	}
	secret.Data = map[string][]byte{tlssecret.CAKey: st.PEM()}
}
