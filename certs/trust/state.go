package trust

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"slices"
	"time"

	"github.com/lifecycle-manager/certs/pki"
)

// Phase is the step of a CA rotation.
type Phase string

// The phases, in order; a rotation ends where it started, in Stable.
const (
	// PhaseStable: the newest CA signs every certificate. Older CAs may stay
	// in the bundle until they expire.
	PhaseStable Phase = "Stable"
	// PhaseCAAdded: a new CA is in the bundle but signs nothing yet, until
	// every listener and gateway has loaded the bundle.
	PhaseCAAdded Phase = "CAAdded"
	// PhaseReissuingClients: client certificates come from the new CA; the
	// endpoint's server certificate still from the previous one, until every
	// agent has the new bundle.
	PhaseReissuingClients Phase = "ReissuingClients"
)

// Phases lists every phase.
var Phases = []Phase{PhaseStable, PhaseCAAdded, PhaseReissuingClients}

// Timing is when the phases change, counted from the time the newest CA
// joined the bundle.
type Timing struct {
	PropagationDelay time.Duration
	GracePeriod      time.Duration
}

// State is the trust bundle.
type State struct {
	// CAs in the order they joined; the last is the newest.
	CAs []*x509.Certificate
	// NewestAddedAt is when the last CA joined.
	NewestAddedAt time.Time
	// Emergency is an emergency rotation in progress; the zero value is none.
	Emergency Emergency
	// Request is the last rotation asked for by name; the zero value is none.
	Request Request
	// EmergencyRequest names the last emergency rotation asked for by name
	// (the rotate-ca-emergency annotation's value); it outlives the
	// emergency, so that the request is carried out once.
	EmergencyRequest string
	// Recorded are the fingerprints of the CAs the operator last wrote into
	// the bundle; nil when the bundle was written before that record
	// existed. A CA in the bundle but not here came from someone else.
	Recorded map[string]bool
	// Foreign are the CAs Load found in the bundle and left out: neither
	// recorded nor trusted by fingerprint. The next Save drops them.
	Foreign []*x509.Certificate
}

// Request is a rotation asked for by name (the value of the rotate-ca
// annotation), recorded before its new CA is made, so that the request is
// carried out once however often it is seen: a CA made for it is
// recognised, and not made again, after a restart in between.
type Request struct {
	// ID names the request; empty means none.
	ID string
	// Replaces is the Fingerprint of the newest CA when it was asked for:
	// a newest CA with another fingerprint was made for it.
	Replaces string
}

// withoutForeign returns the state without the CAs that the operator did
// not write into the bundle and that trusted does not name, in Foreign. A
// trusted CA new to the bundle goes first: it is no newer CA of the
// operator's, so it starts no rotation. A bundle without a record keeps
// every CA: it was written before the record existed.
func (s State) withoutForeign(trusted map[string]bool) State {
	if s.Recorded == nil {
		return s
	}
	var added, kept []*x509.Certificate
	for _, ca := range s.CAs {
		switch fp := Fingerprint(ca); {
		case s.Recorded[fp]:
			kept = append(kept, ca)
		case trusted[fp]:
			added = append(added, ca)
		default:
			s.Foreign = append(s.Foreign, ca)
		}
	}
	s.CAs = slices.Concat(added, kept)
	return s
}

// Emergency is an emergency rotation: a CA key may have leaked, so every
// CA in the bundle up to the one it replaces leaves the bundle as soon as
// a new CA signs every agent certificate (or at a deadline), instead of
// when they expire.
type Emergency struct {
	// Since is when it was asked for; zero means no emergency.
	Since time.Time
	// Replaces is the Fingerprint of the newest CA when it was asked for:
	// a newer one must join before the old ones can go.
	Replaces string
}

// Active reports whether an emergency rotation is in progress.
func (e Emergency) Active() bool { return !e.Since.IsZero() }

// Fingerprint is the SHA-256 of a certificate's DER, in hex.
func Fingerprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	return hex.EncodeToString(sum[:])
}

// WithEmergency returns the state with an emergency rotation asked for at
// now, replacing the current newest CA.
func (s State) WithEmergency(now time.Time) State {
	s.Emergency = Emergency{Since: now}
	if n := s.Newest(); n != nil {
		s.Emergency.Replaces = Fingerprint(n)
	}
	return s
}

// EmergencyCAJoined reports whether the CA that replaces the suspect ones
// is in the bundle.
func (s State) EmergencyCAJoined() bool {
	n := s.Newest()
	return s.Emergency.Active() && n != nil && Fingerprint(n) != s.Emergency.Replaces
}

// OnlyNewest returns the state with the newest CA alone, the emergency
// over, and the CAs that left.
func (s State) OnlyNewest() (State, []*x509.Certificate) {
	s.Emergency = Emergency{}
	if len(s.CAs) == 0 {
		return s, nil
	}
	last := len(s.CAs) - 1
	dropped := slices.Clone(s.CAs[:last])
	s.CAs = []*x509.Certificate{s.CAs[last]}
	return s, dropped
}

// Newest returns the CA that joined last, nil for an empty bundle.
func (s State) Newest() *x509.Certificate {
	if len(s.CAs) == 0 {
		return nil
	}
	return s.CAs[len(s.CAs)-1]
}

// PEM returns the bundle as it goes into ca.crt.
func (s State) PEM() []byte { return pki.EncodeCerts(s.CAs...) }

// Index returns the position of ca in the bundle, -1 when it is not there.
func (s State) Index(ca *x509.Certificate) int {
	return slices.IndexFunc(s.CAs, ca.Equal)
}

// IssuerIndex returns the position of the CA that signed leaf, -1 when no
// CA of the bundle did.
func (s State) IssuerIndex(leaf *x509.Certificate) int {
	for i := len(s.CAs) - 1; i >= 0; i-- {
		if leaf.CheckSignatureFrom(s.CAs[i]) == nil {
			return i
		}
	}
	return -1
}

// WithNewest returns the state with ca as the newest CA, added (or moved to
// the end) at now, and whether that changed anything.
func (s State) WithNewest(ca *x509.Certificate, now time.Time) (State, bool) {
	if n := s.Newest(); n != nil && n.Equal(ca) {
		return s, false
	}
	s.CAs = append(slices.DeleteFunc(slices.Clone(s.CAs), ca.Equal), ca)
	s.NewestAddedAt = now
	return s, true
}

// Pruned returns the state without the CAs that expired before now, and the
// removed ones. The newest CA always stays: an empty bundle trusts nobody.
func (s State) Pruned(now time.Time) (State, []*x509.Certificate) {
	var keep, removed []*x509.Certificate
	for i, ca := range s.CAs {
		if now.After(ca.NotAfter) && i != len(s.CAs)-1 {
			removed = append(removed, ca)
			continue
		}
		keep = append(keep, ca)
	}
	s.CAs = keep
	return s, removed
}

// previous returns the newest CA before the last that is still valid at now.
func (s State) previous(now time.Time) *x509.Certificate {
	for i := len(s.CAs) - 2; i >= 0; i-- {
		if !now.After(s.CAs[i].NotAfter) {
			return s.CAs[i]
		}
	}
	return nil
}

// Phase returns the rotation phase at now.
func (s State) Phase(now time.Time, t Timing) Phase {
	if s.previous(now) == nil {
		return PhaseStable // nothing to rotate away from
	}
	switch since := now.Sub(s.NewestAddedAt); {
	case since < t.PropagationDelay:
		return PhaseCAAdded
	case since < t.GracePeriod:
		return PhaseReissuingClients
	default:
		return PhaseStable
	}
}

// ClientCA returns the CA that client (agent) certificates should come from at now.
func (s State) ClientCA(now time.Time, t Timing) *x509.Certificate {
	if s.Phase(now, t) == PhaseCAAdded {
		return s.previous(now)
	}
	return s.Newest()
}

// ServerCA returns the CA that the endpoint's server certificate should come from at now.
func (s State) ServerCA(now time.Time, t Timing) *x509.Certificate {
	if s.Phase(now, t) != PhaseStable {
		return s.previous(now)
	}
	return s.Newest()
}

// NextChange returns when the phase changes next, the zero time when it
// stays Stable until a new CA comes.
func (s State) NextChange(now time.Time, t Timing) time.Time {
	switch s.Phase(now, t) {
	case PhaseCAAdded:
		return s.NewestAddedAt.Add(t.PropagationDelay)
	case PhaseReissuingClients:
		return s.NewestAddedAt.Add(t.GracePeriod)
	default:
		return time.Time{}
	}
}
