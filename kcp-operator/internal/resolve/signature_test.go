package resolve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

type fixedTrust struct{ trust *signature.Trust }

func (f fixedTrust) Trust(context.Context) (*signature.Trust, string, error) {
	return f.trust, "1", nil
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// signTemplate records the default CR in the descriptor, signs it with
// key and labels the template with the signature's name, as modulectl does.
func signTemplate(t *testing.T, tmpl v1beta2.ModuleTemplate, key *ecdsa.PrivateKey) v1beta2.ModuleTemplate {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(tmpl.Spec.Descriptor.Raw, &doc))
	crDigest, err := signature.ObjectDigest(tmpl.Spec.Data.Object)
	require.NoError(t, err)
	component := doc["component"].(map[string]any)
	component["labels"] = append(component["labels"].([]any), map[string]any{"name": signature.DefaultCRLabel, "value": crDigest})
	unsigned, err := json.Marshal(doc)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	s, err := signature.NewSigner("release", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil, time.Now())
	require.NoError(t, err)
	sig, err := s.Sign(unsigned)
	require.NoError(t, err)
	doc["signatures"] = []signature.Signature{sig}
	tmpl.Spec.Descriptor.Raw, err = json.Marshal(doc)
	require.NoError(t, err)
	tmpl.Labels = map[string]string{shared.SignatureLabel: "release"}
	return tmpl
}

func signedCatalog(t *testing.T) *resolve.Resolver {
	t.Helper()
	trusted, stranger := newKey(t), newKey(t)
	der, err := x509.MarshalPKIXPublicKey(trusted.Public())
	require.NoError(t, err)
	anchors, err := signature.ParseTrust("Secret kcp-system/module-trust", map[string][]byte{
		"release.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
	})
	require.NoError(t, err)
	mandatorySigned, mandatoryPlain := signTemplate(t, template(t, "btp-operator", "1.0.0", ""), trusted), template(t, "telemetry", "1.0.0", "")
	mandatorySigned.Spec.Mandatory, mandatoryPlain.Spec.Mandatory = true, true
	templates := []v1beta2.ModuleTemplate{
		signTemplate(t, template(t, "signed", "1.0.0", ""), trusted),
		signTemplate(t, template(t, "forged", "1.0.0", ""), stranger),
		template(t, "plain", "1.0.0", ""),
		mandatorySigned, mandatoryPlain,
	}
	var metas []v1beta2.ModuleReleaseMeta
	for _, m := range []string{"signed", "forged", "plain"} {
		metas = append(metas, releaseMeta(m, map[string]string{"regular": "1.0.0"}))
	}
	checker := signature.NewChecker(signature.PolicyOff, fixedTrust{anchors})
	return resolve.New(catalogReader(t, templates, metas)).WithSignatures(checker)
}

func TestResolveChecksSignaturesByTheKymasPolicy(t *testing.T) {
	r := signedCatalog(t)
	policy := func(p string) map[string]string { return map[string]string{shared.SignaturePolicyLabel: p} }
	tests := []struct {
		name        string
		labels      map[string]string
		module      string
		wantSigner  string
		wantWarning string
		wantErr     string
	}{
		{name: "off: an unsigned module resolves unchecked", module: "plain"},
		{name: "off: a forged module resolves unchecked", module: "forged"},
		{name: "enforce: signed by a trusted key", labels: policy("enforce"), module: "signed", wantSigner: "key release.pub"},
		{name: "enforce: signed by another key", labels: policy("enforce"), module: "forged",
			wantErr: "ModuleTemplate kcp-system/forged-1.0.0: signature \"release\" (ECDSA-SHA256) does not verify with any trusted key"},
		{name: "enforce: unsigned", labels: policy("enforce"), module: "plain", wantErr: "it is not signed (no label operator.kyma-project.io/signature); refused"},
		{name: "warn: signed by another key", labels: policy("warn"), module: "forged", wantWarning: "does not verify with any trusted key"},
		{name: "warn: unsigned", labels: policy("warn"), module: "plain", wantWarning: "it is not signed"},
		{name: "warn: signed by a trusted key", labels: policy("warn"), module: "signed", wantSigner: "key release.pub"},
		{name: "a policy that is none", labels: policy("strict"), module: "signed", wantErr: `label operator.kyma-project.io/module-signature-policy: "strict" is not a signature policy`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kyma := newKyma("", tc.labels)
			m, err := r.Resolve(t.Context(), kyma, v1beta2.Module{Name: tc.module})
			if tc.wantErr != "" {
				var resErr *resolve.Error
				require.ErrorAs(t, err, &resErr, "refusals show as the module's Error in the Kyma status")
				assert.Equal(t, tc.module, resErr.Module)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.labels != nil, m.Signature.Checked())
			assert.Contains(t, m.Signature.Signer, tc.wantSigner)
			if tc.wantWarning == "" {
				assert.Empty(t, m.Signature.Warning)
			} else {
				assert.Contains(t, m.Signature.Warning, tc.wantWarning)
			}
		})
	}
}

func TestMandatoryModulesAreCheckedToo(t *testing.T) {
	r := signedCatalog(t)
	modules, errs := r.Mandatory(t.Context(), newKyma("", map[string]string{shared.SignaturePolicyLabel: "enforce"}))
	require.Len(t, modules, 1)
	assert.Equal(t, "btp-operator", modules[0].Name)
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], `module "telemetry": ModuleTemplate kcp-system/telemetry-1.0.0: it is not signed`)

	modules, errs = r.Mandatory(t.Context(), newKyma("", nil))
	assert.Len(t, modules, 2, "under off both install")
	assert.Empty(t, errs)
}
