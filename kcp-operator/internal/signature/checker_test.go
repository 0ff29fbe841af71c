package signature_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// staticTrust is a TrustSource of fixed anchors.
type staticTrust struct {
	trust    *signature.Trust
	revision string
	err      error
}

func (s *staticTrust) Trust(context.Context) (*signature.Trust, string, error) {
	return s.trust, s.revision, s.err
}

func TestCheckerAppliesThePolicy(t *testing.T) {
	key, wrong := ecdsaKey(t), ecdsaKey(t)
	source := &staticTrust{trust: trust(t, map[string][]byte{"k.pub": publicPEM(t, key)}), revision: "1"}
	cr := defaultCR()
	signedBy := func(s *signature.Signer) []byte { return signed(t, descriptorDoc(t, cr, nil), s) }
	tests := []struct {
		name        string
		policy      signature.Policy
		signature   string
		doc         []byte
		wantRefused bool
		wantWarning string
		wantSigner  string
	}{
		{name: "off checks nothing", policy: signature.PolicyOff, doc: signedBy(signer(t, wrong, nil))},
		{name: "verified under warn", policy: signature.PolicyWarn, signature: signature.DefaultName, doc: signedBy(signer(t, key, nil)), wantSigner: "key k.pub"},
		{name: "verified under enforce", policy: signature.PolicyEnforce, signature: signature.DefaultName, doc: signedBy(signer(t, key, nil)), wantSigner: "key k.pub"},
		{name: "missing signature under warn", policy: signature.PolicyWarn, doc: signedBy(signer(t, key, nil)), wantWarning: "is not signed"},
		{name: "missing signature under enforce", policy: signature.PolicyEnforce, doc: signedBy(signer(t, key, nil)), wantRefused: true},
		{name: "wrong key under warn", policy: signature.PolicyWarn, signature: signature.DefaultName, doc: signedBy(signer(t, wrong, nil)), wantWarning: "does not verify with any trusted key"},
		{name: "wrong key under enforce", policy: signature.PolicyEnforce, signature: signature.DefaultName, doc: signedBy(signer(t, wrong, nil)), wantRefused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := signature.NewChecker(signature.PolicyWarn, source)
			c.Now = func() time.Time { return now }
			v, err := c.Check(t.Context(), tc.policy, template(tc.doc, cr, tc.signature))
			if tc.wantRefused {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "ModuleTemplate kcp-system/sample-1.0.0: ")
				assert.Contains(t, err.Error(), "refused by the module signature policy enforce")
				assert.NotEmpty(t, signature.ReasonOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.policy, v.Policy)
			assert.Equal(t, tc.policy != signature.PolicyOff, v.Checked())
			assert.Contains(t, v.Signer, tc.wantSigner)
			if tc.wantWarning == "" {
				assert.Empty(t, v.Warning)
			} else {
				assert.Contains(t, v.Warning, tc.wantWarning)
				assert.NotEmpty(t, v.Reason)
			}
		})
	}
}

func TestWithoutAnchorsTheDefaultIsOff(t *testing.T) {
	c := signature.NewChecker(signature.PolicyWarn, nil)
	assert.Equal(t, signature.PolicyOff, c.Default(), "an upgrade without trust anchors warns about nothing")
	p, err := c.PolicyFor(map[string]string{shared.SignaturePolicyLabel: "enforce"})
	require.NoError(t, err)
	_, err = c.Check(t.Context(), p, template(mustJSON(t, descriptorDoc(t, nil, nil)), nil, "s"))
	assert.Equal(t, signature.ReasonNoTrust, signature.ReasonOf(err))
	assert.ErrorContains(t, err, "no trust anchors are configured (--module-trust-secret)")
}

func TestAKymaRaisesThePolicyButNeverLowersIt(t *testing.T) {
	source := &staticTrust{trust: trust(t, map[string][]byte{"k": publicPEM(t, ecdsaKey(t))})}
	tests := []struct {
		def     signature.Policy
		label   string
		want    signature.Policy
		wantErr string
	}{
		{def: signature.PolicyWarn, want: signature.PolicyWarn},
		{def: signature.PolicyOff, label: "enforce", want: signature.PolicyEnforce},
		{def: signature.PolicyOff, label: "warn", want: signature.PolicyWarn},
		{def: signature.PolicyEnforce, label: "off", want: signature.PolicyEnforce},
		{def: signature.PolicyWarn, label: "off", want: signature.PolicyWarn},
		{def: signature.PolicyOff, label: "enforced", want: signature.PolicyEnforce, wantErr: `"enforced" is not a signature policy`},
	}
	for _, tc := range tests {
		labels := map[string]string{}
		if tc.label != "" {
			labels[shared.SignaturePolicyLabel] = tc.label
		}
		got, err := signature.NewChecker(tc.def, source).PolicyFor(labels)
		assert.Equal(t, tc.want, got, "default %s, label %q", tc.def, tc.label)
		if tc.wantErr != "" {
			assert.ErrorContains(t, err, tc.wantErr)
		} else {
			assert.NoError(t, err)
		}
	}
}

func TestVerdictsAreCachedUntilTheTemplateTheTrustOrTheCertificateChanges(t *testing.T) {
	ca, key := newCA(t, "CA"), ecdsaKey(t)
	cert := ca.issue(t, "release", key, now.Add(-time.Hour), now.Add(time.Minute))
	source := &staticTrust{trust: trust(t, map[string][]byte{"ca.crt": ca.pem()}), revision: "1"}
	clock := now
	c := signature.NewChecker(signature.PolicyEnforce, source)
	c.Now = func() time.Time { return clock }
	cr := defaultCR()
	tmpl := template(signed(t, descriptorDoc(t, cr, nil), signer(t, key, cert)), cr, signature.DefaultName)

	_, err := c.Check(t.Context(), signature.PolicyEnforce, tmpl)
	require.NoError(t, err)
	tampered := edited(tmpl.DeepCopy(), `"provider":"kyma-project.io"`, `"provider":"mallory"`)
	_, err = c.Check(t.Context(), signature.PolicyEnforce, tampered)
	assert.NoError(t, err, "the same resource version is the same content: the verdict is reused")

	tampered.ResourceVersion = "2"
	_, err = c.Check(t.Context(), signature.PolicyEnforce, tampered)
	assert.Equal(t, signature.ReasonModified, signature.ReasonOf(err), "a new resource version is checked again")

	source.trust, source.revision = trust(t, map[string][]byte{"other.crt": newCA(t, "other").pem()}), "2"
	_, err = c.Check(t.Context(), signature.PolicyEnforce, tmpl)
	assert.Equal(t, signature.ReasonUntrusted, signature.ReasonOf(err), "new anchors: checked again")

	source.trust, source.revision = trust(t, map[string][]byte{"ca.crt": ca.pem()}), "3"
	_, err = c.Check(t.Context(), signature.PolicyEnforce, tmpl)
	require.NoError(t, err)
	clock = now.Add(2 * time.Minute)
	_, err = c.Check(t.Context(), signature.PolicyEnforce, tmpl)
	assert.Equal(t, signature.ReasonExpired, signature.ReasonOf(err), "a verdict ends with its certificate")

	source.err = errors.New("secrets \"module-trust\" not found")
	_, err = c.Check(t.Context(), signature.PolicyEnforce, tmpl)
	assert.Equal(t, signature.ReasonNoTrust, signature.ReasonOf(err))
	assert.ErrorContains(t, err, "the trust anchors cannot be read")
}

func TestSecretTrustReadsAgainAfterItsTTL(t *testing.T) {
	key := ecdsaKey(t)
	data, revision := map[string][]byte{"k.pub": publicPEM(t, key)}, "1"
	var readErr error
	reads := 0
	clock := now
	s := &signature.SecretTrust{
		Name: "kcp-system/module-trust", TTL: time.Minute, Now: func() time.Time { return clock },
		Read: func(context.Context) (map[string][]byte, string, error) {
			reads++
			return data, revision, readErr
		},
	}
	first, rev, err := s.Trust(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "1", rev)
	assert.Contains(t, first.Describe(), "Secret kcp-system/module-trust")

	data, revision = map[string][]byte{"bad": []byte("x")}, "2"
	_, _, err = s.Trust(t.Context())
	require.NoError(t, err, "within the TTL the Secret is not read")
	assert.Equal(t, 1, reads)

	clock = clock.Add(2 * time.Minute)
	_, _, err = s.Trust(t.Context())
	assert.ErrorContains(t, err, "Secret kcp-system/module-trust, bad: no PEM block")

	data, revision = map[string][]byte{"k.pub": publicPEM(t, key)}, "3"
	clock = clock.Add(2 * time.Minute)
	again, rev, err := s.Trust(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "3", rev)
	assert.NotSame(t, first, again)

	readErr = errors.New("forbidden")
	clock = clock.Add(2 * time.Minute)
	_, _, err = s.Trust(t.Context())
	assert.ErrorContains(t, err, "forbidden")
	assert.Equal(t, 4, reads)
}
