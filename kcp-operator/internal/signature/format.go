package signature

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lifecycle-manager/api/shared"
)

// The algorithms and media type this package writes and reads.
const (
	// HashSHA256 is the hash of the canonical descriptor.
	HashSHA256 = "SHA-256"
	// NormalisationV1 names the canonical form of Canonical.
	NormalisationV1 = "lifecycle-manager/canonical-json/v1"
	// AlgorithmECDSA is an ECDSA signature (ASN.1 DER) of the digest.
	AlgorithmECDSA = "ECDSA-SHA256"
	// AlgorithmEd25519 is an Ed25519 signature of the digest's 32 bytes.
	AlgorithmEd25519 = "Ed25519"
	// MediaTypeHex says the signature value is the signature's bytes as hex.
	MediaTypeHex = "application/vnd.lifecycle-manager.signature.v1+hex"
)

// DefaultName is the signature name modulectl writes unless told another.
const DefaultName = "module-signature"

// DefaultCRLabel is the descriptor label with the digest of the
// ModuleTemplate's default CR (spec.data), so that the signature of the
// descriptor covers what the operator creates from it.
const DefaultCRLabel = shared.OperatorGroup + "/default-cr-digest"

// Signature is one entry of a descriptor's signatures.
type Signature struct {
	Name      string `json:"name"`
	Digest    Digest `json:"digest"`
	Signature Value  `json:"signature"`
}

// Digest is what was signed.
type Digest struct {
	HashAlgorithm          string `json:"hashAlgorithm"`
	NormalisationAlgorithm string `json:"normalisationAlgorithm"`
	Value                  string `json:"value"`
}

// Value is the signature itself.
type Value struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"value"`
	MediaType string `json:"mediaType"`
	// Certificate is the signer's certificate and its intermediates, PEM,
	// leaf first; empty for a signature by a bare key.
	Certificate string `json:"certificate,omitempty"`
}

// Signatures returns the signatures of a descriptor (JSON or YAML).
func Signatures(doc []byte) ([]Signature, error) {
	v, err := decode(doc)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the descriptor is not an object")
	}
	raw, ok := obj[signaturesField]
	if !ok || raw == nil {
		return nil, nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("reading the signatures: %w", err)
	}
	var sigs []Signature
	if err := json.Unmarshal(data, &sigs); err != nil {
		return nil, fmt.Errorf("the descriptor's signatures are not a list of {name, digest, signature}: %w", err)
	}
	return sigs, nil
}

// find returns the signature called name.
func find(sigs []Signature, name string) (Signature, bool) {
	for _, s := range sigs {
		if s.Name == name {
			return s, true
		}
	}
	return Signature{}, false
}

func names(sigs []Signature) string {
	out := make([]string, 0, len(sigs))
	for _, s := range sigs {
		out = append(out, fmt.Sprintf("%q", s.Name))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
