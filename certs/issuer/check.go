package issuer

import (
	"crypto"
	"crypto/x509"
	"net"
	"slices"
	"time"

	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/trust"
)

// Reason says why a certificate no longer serves its request.
type Reason string

// The reasons, also the "reason" label of the renewals metric.
const (
	// ReasonMissing: there is no certificate (the Secret is new or was deleted).
	ReasonMissing Reason = "missing"
	// ReasonInvalid: the PEM does not parse or the key does not match.
	ReasonInvalid Reason = "invalid"
	// ReasonIdentityChanged: common name (runtime ID), DNS names, IPs or usages differ.
	ReasonIdentityChanged Reason = "identity-changed"
	// ReasonUntrusted: no CA of the bundle signed it.
	ReasonUntrusted Reason = "untrusted"
	// ReasonCARotated: it comes from a CA older than the one the rotation wants.
	ReasonCARotated Reason = "ca-rotated"
	// ReasonExpiring: it is within its renewal window, and a new one would last longer.
	ReasonExpiring Reason = "expiring"
	// ReasonDenied: it is on the deny list (it leaked); never used again.
	ReasonDenied Reason = "denied"
)

// Lifetime is how long certificates live and when they are renewed.
type Lifetime struct {
	Duration    time.Duration
	RenewBefore time.Duration
}

// Verdict is what Evaluate found.
type Verdict struct {
	// Reason is empty when the certificate serves the request.
	Reason Reason
	// Leaf is the parsed certificate, nil when missing or invalid.
	Leaf *x509.Certificate
	// IssuerIndex is the position in the bundle of the CA that signed it, -1 for none.
	IssuerIndex int
	// Err explains ReasonInvalid.
	Err error
}

// Fine reports whether the certificate serves its request as it is.
func (v Verdict) Fine() bool { return v.Reason == "" }

// Usable reports whether the certificate, even if due for replacement, can
// still be used at now: it is for the right identity, trusted and unexpired.
func (v Verdict) Usable(now time.Time) bool {
	switch v.Reason {
	case "", ReasonExpiring, ReasonCARotated:
		return v.Leaf != nil && now.Before(v.Leaf.NotAfter)
	default:
		return false
	}
}

// Evaluate checks a certificate and key against req: identity, trust, the
// CA the rotation wants (target; a newer CA of the bundle is as good) and
// the renewal window.
func Evaluate(certPEM, keyPEM []byte, req Request, st trust.State, target *x509.Certificate, now time.Time, lt Lifetime) Verdict {
	v := Verdict{IssuerIndex: -1}
	if len(certPEM) == 0 && len(keyPEM) == 0 {
		v.Reason = ReasonMissing
		return v
	}
	certs, err := pki.ParseCerts(certPEM)
	if err == nil {
		var key crypto.Signer
		if key, err = pki.ParseKey(keyPEM); err == nil {
			err = pki.KeyMatches(certs[0], key)
		}
	}
	if err != nil {
		v.Reason, v.Err = ReasonInvalid, err
		return v
	}
	v.Leaf = certs[0]
	v.IssuerIndex = st.IssuerIndex(v.Leaf)
	switch {
	case req.Denied != nil && req.Denied(v.Leaf):
		v.Reason = ReasonDenied
	case !sameIdentity(v.Leaf, req):
		v.Reason = ReasonIdentityChanged
	case v.IssuerIndex < 0:
		v.Reason = ReasonUntrusted
	case target != nil && v.IssuerIndex < st.Index(target):
		v.Reason = ReasonCARotated
	case dueForRenewal(v.Leaf, target, now, lt):
		v.Reason = ReasonExpiring
	}
	return v
}

// dueForRenewal: inside the renewal window, and a new certificate from
// target would expire later. The second part matters near the end of a CA's
// life, when certificates are cut to the CA's expiry: renewing them would
// only produce the same expiry again.
func dueForRenewal(leaf, target *x509.Certificate, now time.Time, lt Lifetime) bool {
	renewBefore := lt.RenewBefore
	if life := leaf.NotAfter.Sub(leaf.NotBefore); renewBefore >= life {
		renewBefore = life / 3
	}
	if now.Before(leaf.NotAfter.Add(-renewBefore)) {
		return false
	}
	fresh := now.Add(lt.Duration)
	if target != nil && target.NotAfter.Before(fresh) {
		fresh = target.NotAfter
	}
	return fresh.After(leaf.NotAfter) || !now.Before(leaf.NotAfter)
}

func sameIdentity(leaf *x509.Certificate, req Request) bool {
	if leaf.Subject.CommonName != req.CommonName {
		return false
	}
	if !sameSet(leaf.DNSNames, req.DNSNames) || !sameSet(ipStrings(leaf.IPAddresses), ipStrings(req.IPs)) {
		return false
	}
	usage := req.Purpose.Usage()
	if usage&pki.UsageClient != 0 && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return false
	}
	if usage&pki.UsageServer != 0 && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		return false
	}
	return true
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}
