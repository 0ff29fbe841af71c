package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
)

// InstalledResources are the descriptor resources the operator installs
// from; each must be pinned by digest for a signature to cover it.
var InstalledResources = []string{"raw-manifest", "helm-chart", "config"}

// Verified is a signature that verified.
type Verified struct {
	Name string
	// Signer is the certificate's subject, or the trusted key.
	Signer string
	// Expires is when the first certificate of the chain expires; zero for
	// a signature by a bare key.
	Expires time.Time
}

// VerifyTemplate checks a ModuleTemplate: the signature its label names
// verifies against trust at now, the layers the operator installs from
// are pinned by digest, the default CR (spec.data) is the one the
// descriptor records, and spec.version is the descriptor's version.
func VerifyTemplate(t *v1beta2.ModuleTemplate, trust *Trust, now time.Time) (*Verified, error) {
	return VerifyTemplateWith(t, nil, trust, now)
}

// Document is a template's descriptor that the template does not embed:
// the one read from the registry for its version.
type Document struct {
	// Raw is the descriptor as stored; the signature covers it.
	Raw []byte
	// Parsed is Raw parsed, with the repository it was read from as its
	// last repository context.
	Parsed *descriptor.Descriptor
	// Digest identifies Raw (the digest of its layer).
	Digest string
}

// VerifyTemplateWith is VerifyTemplate for a template whose descriptor is
// doc, not spec.descriptor; a nil doc is spec.descriptor. The checks are
// the same: a descriptor from the registry is no more trusted than one in
// the template.
func VerifyTemplateWith(t *v1beta2.ModuleTemplate, doc *Document, trust *Trust, now time.Time) (*Verified, error) {
	name := t.Labels[shared.SignatureLabel]
	if name == "" {
		return nil, fail(ReasonUnsigned, "it is not signed (no label %s)", shared.SignatureLabel)
	}
	raw, field := t.Spec.Descriptor.Raw, "spec.descriptor"
	if doc != nil {
		raw, field = doc.Raw, "the registry's descriptor "+doc.Digest
	}
	v, err := VerifyDescriptor(raw, name, trust, now)
	if err != nil {
		return nil, err
	}
	var d *descriptor.Descriptor
	if doc != nil && doc.Parsed != nil {
		d = doc.Parsed
	} else if d, err = descriptor.Parse(raw); err != nil {
		return nil, &Error{Reason: ReasonMalformed, Err: fmt.Errorf("%s: %w", field, err)}
	}
	if err := covered(t, d); err != nil {
		return nil, err
	}
	return v, nil
}

// covered checks that what the operator installs besides the descriptor
// is fixed by the descriptor.
func covered(t *v1beta2.ModuleTemplate, d *descriptor.Descriptor) error {
	for _, name := range InstalledResources {
		if _, ok := d.Resource(name); !ok {
			continue
		}
		l, err := d.LayerOf(name)
		if err != nil {
			return &Error{Reason: ReasonNotCovered, Err: err}
		}
		if l.Digest == "" {
			return fail(ReasonNotCovered, "resource %q is referenced by tag %s: a tag can move, so the signature does not cover its content; publish it by digest", name, l.Ref())
		}
	}
	recorded, hasLabel := d.Label(DefaultCRLabel)
	switch {
	case t.Spec.Data == nil && hasLabel:
		return fail(ReasonNotCovered, "the signed descriptor records a default CR (label %s), the template has none (spec.data)", DefaultCRLabel)
	case t.Spec.Data == nil:
	case !hasLabel:
		return fail(ReasonNotCovered, "the default CR (spec.data) is not covered by the signature: the descriptor has no label %s", DefaultCRLabel)
	default:
		var want string
		if err := json.Unmarshal(recorded, &want); err != nil {
			return fail(ReasonMalformed, "the descriptor's label %s is not a digest string", DefaultCRLabel)
		}
		got, err := ObjectDigest(t.Spec.Data.Object)
		if err != nil {
			return &Error{Reason: ReasonMalformed, Err: fmt.Errorf("spec.data: %w", err)}
		}
		if got != want {
			return fail(ReasonModified, "the default CR (spec.data) was changed after signing: its digest is %s, the descriptor records %s", got, want)
		}
	}
	if t.Spec.Version != "" && t.Spec.Version != d.Version {
		return fail(ReasonNotCovered, "spec.version %s is not the signed descriptor's version %s", t.Spec.Version, d.Version)
	}
	return nil
}

// VerifyDescriptor checks the signature called name of a descriptor (JSON
// or YAML) against trust at now.
func VerifyDescriptor(doc []byte, name string, trust *Trust, now time.Time) (*Verified, error) {
	sigs, err := Signatures(doc)
	if err != nil {
		return nil, &Error{Reason: ReasonMalformed, Err: err}
	}
	sig, ok := find(sigs, name)
	if !ok {
		return nil, fail(ReasonUnsigned, "the descriptor has no signature %q (it has: %s)", name, names(sigs))
	}
	if sig.Digest.HashAlgorithm != HashSHA256 || sig.Digest.NormalisationAlgorithm != NormalisationV1 {
		return nil, fail(ReasonMalformed, "signature %q: digest %s over %s is not supported (want %s over %s)",
			name, sig.Digest.HashAlgorithm, sig.Digest.NormalisationAlgorithm, HashSHA256, NormalisationV1)
	}
	d, err := DigestOf(doc)
	if err != nil {
		return nil, &Error{Reason: ReasonMalformed, Err: err}
	}
	if d.Value != sig.Digest.Value {
		return nil, fail(ReasonModified, "the descriptor was changed after it was signed: its digest is %s, signature %q signed %s",
			d.Value, name, sig.Digest.Value)
	}
	if sig.Signature.MediaType != MediaTypeHex {
		return nil, fail(ReasonMalformed, "signature %q: media type %q is not supported (want %s)", name, sig.Signature.MediaType, MediaTypeHex)
	}
	raw, err := hex.DecodeString(sig.Signature.Value)
	if err != nil {
		return nil, fail(ReasonMalformed, "signature %q: the value is not hex: %v", name, err)
	}
	if trust == nil {
		return nil, fail(ReasonNoTrust, "no trust anchors to check signature %q against", name)
	}
	digest, _ := hex.DecodeString(d.Value) // computed above: always hex
	if sig.Signature.Certificate != "" {
		return verifyWithCertificate(sig, digest, raw, trust, now)
	}
	return verifyWithKeys(sig, digest, raw, trust)
}

func verifyWithCertificate(sig Signature, digest, raw []byte, trust *Trust, now time.Time) (*Verified, error) {
	chain, err := parseCertificates([]byte(sig.Signature.Certificate))
	if err != nil {
		return nil, fail(ReasonMalformed, "signature %q: %v", sig.Name, err)
	}
	if trust.cas == 0 {
		return nil, fail(ReasonUntrusted, "signature %q carries a certificate (%s), but %s hold no CA certificate", sig.Name, chain[0].Subject, trust.Describe())
	}
	leaf := chain[0]
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err = leaf.Verify(x509.VerifyOptions{
		Roots: trust.roots, Intermediates: intermediates, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	})
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return nil, fail(ReasonExpired, "signature %q: the certificate %s is expired or not yet valid (valid %s to %s): %v", sig.Name, leaf.Subject,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), err)
	case err != nil:
		return nil, fail(ReasonUntrusted, "signature %q: the certificate %s is not trusted by %s: %v", sig.Name, leaf.Subject, trust.Describe(), err)
	case !allowsCodeSigning(leaf):
		return nil, fail(ReasonUntrusted, "signature %q: the certificate %s does not allow code signing", sig.Name, leaf.Subject)
	}
	if !verifies(sig.Signature.Algorithm, leaf.PublicKey, digest, raw) {
		return nil, fail(ReasonBadSignature, "signature %q does not verify with the key of its certificate %s", sig.Name, leaf.Subject)
	}
	expires := leaf.NotAfter
	for _, c := range chain[1:] {
		if c.NotAfter.Before(expires) {
			expires = c.NotAfter
		}
	}
	return &Verified{Name: sig.Name, Signer: leaf.Subject.String(), Expires: expires}, nil
}

func verifyWithKeys(sig Signature, digest, raw []byte, trust *Trust) (*Verified, error) {
	for _, k := range trust.keys {
		if verifies(sig.Signature.Algorithm, k.key, digest, raw) {
			return &Verified{Name: sig.Name, Signer: fmt.Sprintf("key %s (%s)", k.entry, Fingerprint(k.key))}, nil
		}
	}
	return nil, fail(ReasonUntrusted, "signature %q (%s) does not verify with any trusted key (%s)", sig.Name, sig.Signature.Algorithm, trust.Describe())
}

// verifies reports whether raw is a signature of digest by pub under algorithm.
func verifies(algorithm string, pub crypto.PublicKey, digest, raw []byte) bool {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		return algorithm == AlgorithmECDSA && ecdsa.VerifyASN1(k, digest, raw)
	case ed25519.PublicKey:
		return algorithm == AlgorithmEd25519 && ed25519.Verify(k, digest, raw)
	default:
		return false
	}
}
