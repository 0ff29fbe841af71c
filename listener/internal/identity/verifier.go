package identity

import (
	"crypto/x509"
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"github.com/lifecycle-manager/certs/denylist"
	"github.com/lifecycle-manager/certs/tlsreload"
)

// Defaults of the verification cache.
const (
	DefaultCacheSize = 16384
	// recheckAfter bounds how long a cached verdict stands without a new
	// verification, so that a CA certificate that expires, unlike a bundle
	// change, takes effect within this time.
	recheckAfter = time.Minute
)

// Verifier checks client certificate chains against a CA bundle and
// remembers its verdicts: a runtime sends the same certificate with every
// event, and a full chain verification costs a signature check.
//
// A verdict is remembered under the exact certificate material it was
// reached for (the leaf's DER, or the header value it was decoded from),
// and used only while the bundle is the same (a rotation re-verifies at
// once), the time lies within the validity of every certificate of the
// chain, and for at most a minute.
type Verifier struct {
	bundle *tlsreload.Bundle
	now    func() time.Time
	max    int
	seed   maphash.Seed
	// deny is consulted on every verification, cached or not, so that a
	// certificate added to it loses access with its next request.
	deny *denylist.List

	mu    sync.Mutex
	cache map[uint64]verdict
}

type verdict struct {
	// material is compared on every hit: the map key is only a hash.
	material   string
	runtimeID  string
	denyKey    string
	pool       *x509.CertPool
	notBefore  time.Time
	validUntil time.Time
}

// NewVerifier returns a Verifier of bundle. now may be nil (time.Now);
// cacheSize <= 0 means DefaultCacheSize.
func NewVerifier(bundle *tlsreload.Bundle, now func() time.Time, cacheSize int) *Verifier {
	if now == nil {
		now = time.Now
	}
	if cacheSize <= 0 {
		cacheSize = DefaultCacheSize
	}
	return &Verifier{bundle: bundle, now: now, max: cacheSize, seed: maphash.MakeSeed(), cache: make(map[uint64]verdict)}
}

// WithDenyList makes v refuse the certificates on l (nil: none) with
// ReasonDenied. Call it before v is used.
func (v *Verifier) WithDenyList(l *denylist.List) *Verifier {
	v.deny = l
	return v
}

// Verify checks the chain that parse returns, which it decodes from
// material, and returns the runtime ID, the leaf's CN. parse runs only
// when no remembered verdict applies.
func (v *Verifier) Verify(material string, parse func() ([]*x509.Certificate, error)) (string, error) {
	return v.verify(maphash.String(v.seed, material), func(m string) bool { return m == material },
		func() string { return strings.Clone(material) }, parse)
}

// VerifyDER is Verify for material in bytes, such as a leaf's DER.
func (v *Verifier) VerifyDER(material []byte, parse func() ([]*x509.Certificate, error)) (string, error) {
	return v.verify(maphash.Bytes(v.seed, material), func(m string) bool { return m == string(material) },
		func() string { return string(material) }, parse)
}

func (v *Verifier) verify(key uint64, same func(string) bool, keep func() string,
	parse func() ([]*x509.Certificate, error)) (string, error) {
	now := v.now()
	// The bundle hands out a new pool for every new set of CAs, so the pool
	// identifies the bundle's version.
	pool := v.bundle.Pool()
	v.mu.Lock()
	d, ok := v.cache[key]
	v.mu.Unlock()
	if ok && same(d.material) && d.pool == pool && !now.Before(d.notBefore) && now.Before(d.validUntil) {
		return v.result(d)
	}
	chain, err := parse()
	if err != nil {
		return "", &Failure{Reason: ReasonMalformedCertificate, Err: err}
	}
	if len(chain) == 0 {
		return "", fail(ReasonNoCertificate, "no client certificate")
	}
	leaf, err := v.bundle.Verify(chain, x509.ExtKeyUsageClientAuth, now)
	if err != nil {
		return "", &Failure{Reason: Reason(err), Err: err}
	}
	if leaf.Subject.CommonName == "" {
		return "", fail(ReasonNoRuntimeID, "the client certificate has no common name")
	}
	d = verdict{
		material: keep(), runtimeID: leaf.Subject.CommonName, pool: pool, denyKey: denylist.Key(leaf),
		notBefore: leaf.NotBefore, validUntil: now.Add(recheckAfter),
	}
	for _, c := range chain {
		if c.NotAfter.Before(d.validUntil) {
			d.validUntil = c.NotAfter
		}
	}
	v.store(key, d)
	return v.result(d)
}

// result is the verdict's runtime ID, or a Failure when its certificate is
// on the deny list. The verdict stays cached: once the list no longer
// holds the certificate, it is accepted again.
func (v *Verifier) result(d verdict) (string, error) {
	if v.deny.DeniedKey(d.denyKey) {
		return "", fail(ReasonDenied, "the certificate of runtime %q is on the deny list", d.runtimeID)
	}
	return d.runtimeID, nil
}

func (v *Verifier) store(key uint64, d verdict) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= v.max {
		// Drop an arbitrary entry: map iteration order is random, and a
		// dropped runtime only costs one verification at its next event.
		for k := range v.cache {
			delete(v.cache, k)
			break
		}
	}
	v.cache[key] = d
}

// Len returns the number of cached verdicts.
func (v *Verifier) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.cache)
}
