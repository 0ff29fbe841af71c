package signature

import (
	"context"
	"sync"
	"time"
)

// DefaultTrustTTL is how long SecretTrust uses what it read.
const DefaultTrustTTL = 10 * time.Second

// SecretTrust reads trust anchors from a Secret (or anything with keys and
// a revision) and reads it again after TTL, parsing it only when its
// revision changed. A Secret that cannot be read or parsed is an error
// until it can.
type SecretTrust struct {
	// Name of the Secret, namespace/name, for messages.
	Name string
	// Read returns the Secret's data and resource version.
	Read func(ctx context.Context) (data map[string][]byte, revision string, err error)
	// TTL is how long a read is used (default DefaultTrustTTL).
	TTL time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu       sync.Mutex
	readAt   time.Time
	revision string
	trust    *Trust
	err      error
}

// Trust implements TrustSource.
func (s *SecretTrust) Trust(ctx context.Context) (*Trust, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultTrustTTL
	}
	if !s.readAt.IsZero() && now.Sub(s.readAt) < ttl {
		return s.trust, s.revision, s.err
	}
	data, revision, err := s.Read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", err // a cancelled reconcile says nothing about the Secret
		}
		s.readAt, s.trust, s.revision, s.err = now, nil, "", err
		return nil, "", err
	}
	s.readAt = now
	if revision == s.revision && revision != "" && s.err == nil {
		return s.trust, s.revision, nil
	}
	s.trust, s.err = ParseTrust("Secret "+s.Name, data)
	s.revision = revision
	return s.trust, s.revision, s.err
}
