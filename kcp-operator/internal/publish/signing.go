package publish

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// signatureLabel on a ModuleTemplate names the signature to check.
const signatureLabel = shared.SignatureLabel

// SignatureInfo describes the signature of a published or verified module.
type SignatureInfo struct {
	// Name is the signature's name, the value of the template's signature label.
	Name string `json:"name"`
	// Signer is the certificate's subject, or the key.
	Signer string `json:"signer"`
	// Digest is the digest of the canonical descriptor that was signed.
	Digest string `json:"digest"`
}

// signing signs the descriptor of one module version.
type signing struct {
	signer *signature.Signer
	// defaultCR is the digest of the default CR; empty without one.
	defaultCR string
	info      *SignatureInfo
}

// newSigning reads the signing key and certificate of req; nil without
// --sign-key.
func newSigning(req *Request, defaultCR *unstructured.Unstructured) (*signing, error) {
	if req.SignKey == "" {
		return nil, nil
	}
	key, err := os.ReadFile(req.SignKey)
	if err != nil {
		return nil, invalid("--sign-key %s: %w", req.SignKey, err)
	}
	var cert []byte
	if req.SignCert != "" {
		if cert, err = os.ReadFile(req.SignCert); err != nil {
			return nil, invalid("--sign-cert %s: %w", req.SignCert, err)
		}
	}
	signer, err := signature.NewSigner(req.SignName, key, cert, time.Now())
	if err != nil {
		return nil, invalid("--sign-key %s: %w", req.SignKey, err)
	}
	s := &signing{signer: signer}
	if defaultCR != nil {
		if s.defaultCR, err = signature.ObjectDigest(defaultCR.Object); err != nil {
			return nil, invalid("--default-cr %s: %w", req.DefaultCR, err)
		}
	}
	return s, nil
}

// sign adds the signature of the unsigned document to d and returns d as JSON.
func (s *signing) sign(d *v2Descriptor, unsigned []byte) ([]byte, error) {
	sig, err := s.signer.Sign(unsigned)
	if err != nil {
		return nil, fmt.Errorf("signing the component descriptor: %w", err)
	}
	d.Signatures = []signature.Signature{sig}
	signed, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the component descriptor: %w", err)
	}
	s.info = &SignatureInfo{Name: sig.Name, Signer: s.signer.Identity(), Digest: "sha256:" + sig.Digest.Value}
	return signed, nil
}

// verifySignature checks the template's signature when there are trust
// anchors, and warns that it is unchecked when there are none.
func verifySignature(req VerifyRequest, doc *signature.Document, access Access, v *Verified) error {
	tmpl := req.Template
	if req.Trust == nil {
		if name := tmpl.Labels[signatureLabel]; name != "" {
			v.Warnings = append(v.Warnings, fmt.Sprintf("the template is signed (signature %q), but the signature was not checked: pass --trust", name))
		}
		return nil
	}
	checked, err := signature.VerifyTemplateWith(tmpl, doc, req.Trust, time.Now())
	if err != nil {
		return verificationFailed("ModuleTemplate %s: %w", tmpl.Name, err)
	}
	raw := tmpl.Spec.Descriptor.Raw
	if doc != nil {
		raw = doc.Raw
	}
	d, err := signature.DigestOf(raw)
	if err != nil {
		return verificationFailed("ModuleTemplate %s: %w", tmpl.Name, err)
	}
	v.Signature = &SignatureInfo{Name: checked.Name, Signer: checked.Signer, Digest: "sha256:" + d.Value}
	access.printf("signature  %q verified: signed by %s", checked.Name, checked.Signer)
	return nil
}
