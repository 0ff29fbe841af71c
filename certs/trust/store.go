package trust

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// The annotations of a rotation asked for by name: the request's value and
// the fingerprint of the CA it replaces (see Request), and the value of the
// last emergency rotation asked for (see State.EmergencyRequest).
const (
	RequestAnnotation          = shared.OperatorGroup + "/ca-rotation-request"
	RequestReplacesAnnotation  = shared.OperatorGroup + "/ca-rotation-replaces"
	EmergencyRequestAnnotation = shared.OperatorGroup + "/ca-emergency-request"
)

// RecordAnnotation lists, comma-separated, the Fingerprint of every CA the
// operator wrote into ca.crt: a CA added to ca.crt by anyone else is not
// in it (see State.Foreign).
const RecordAnnotation = shared.OperatorGroup + "/ca-fingerprints"

// ErrNoBundle is returned by Load before the rotator wrote the first bundle.
var ErrNoBundle = errors.New("no trust bundle yet: the rotator has not run")

// Store reads and writes the bundle Secret.
type Store struct {
	c       client.Client
	key     types.NamespacedName
	trusted map[string]bool
}

// NewStore returns a Store for the bundle Secret key. trusted are the
// fingerprints (see NormalizeFingerprint) of CAs that Load keeps in the
// bundle besides the ones the operator wrote into it.
func NewStore(c client.Client, key types.NamespacedName, trusted ...string) *Store {
	s := &Store{c: c, key: key, trusted: map[string]bool{}}
	for _, fp := range trusted {
		s.trusted[NormalizeFingerprint(fp)] = true
	}
	return s
}

// NormalizeFingerprint turns a SHA-256 fingerprint as openssl prints it
// (upper case, colons) into the form of Fingerprint.
func NormalizeFingerprint(fp string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(fp), ":", ""))
}

// Key is the bundle Secret's name.
func (s *Store) Key() types.NamespacedName { return s.key }

// Load reads the bundle. A missing Secret is ErrNoBundle; a Secret that
// does not parse is an error naming it (and is never overwritten). CAs
// that someone else added to ca.crt are left out, in State.Foreign: every
// reader of the bundle sees only the CAs the operator trusts.
func (s *Store) Load(ctx context.Context) (State, error) {
	secret, err := s.get(ctx)
	if err != nil {
		return State{}, err
	}
	st, err := parse(secret)
	if err != nil {
		return State{}, err
	}
	return st.withoutForeign(s.trusted), nil
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
	st.Request = Request{ID: secret.Annotations[RequestAnnotation], Replaces: secret.Annotations[RequestReplacesAnnotation]}
	st.EmergencyRequest = secret.Annotations[EmergencyRequestAnnotation]
	if v, ok := secret.Annotations[RecordAnnotation]; ok {
		st.Recorded = map[string]bool{}
		for _, fp := range strings.Split(v, ",") {
			if fp = strings.TrimSpace(fp); fp != "" {
				st.Recorded[fp] = true
			}
		}
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
	delete(secret.Annotations, RequestAnnotation)
	delete(secret.Annotations, RequestReplacesAnnotation)
	if st.Request.ID != "" {
		secret.Annotations[RequestAnnotation] = st.Request.ID
		secret.Annotations[RequestReplacesAnnotation] = st.Request.Replaces
	}
	delete(secret.Annotations, EmergencyRequestAnnotation)
	if st.EmergencyRequest != "" {
		secret.Annotations[EmergencyRequestAnnotation] = st.EmergencyRequest
	}
	// What the operator writes is what it trusts: the record lists exactly
	// the CAs of ca.crt.
	fps := make([]string, len(st.CAs))
	for i, ca := range st.CAs {
		fps[i] = Fingerprint(ca)
	}
	secret.Annotations[RecordAnnotation] = strings.Join(fps, ",")
	secret.Data = map[string][]byte{tlssecret.CAKey: st.PEM()}
}
