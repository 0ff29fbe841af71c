package signature_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

const samples = "../../../api/config/samples/signatures/"

// The documented samples stay true: the signed template verifies against
// the sample trust Secret, and not once it is edited.
func TestSamplesVerify(t *testing.T) {
	raw, err := os.ReadFile(samples + "moduletemplate-signed.yaml")
	require.NoError(t, err)
	tmpl := &v1beta2.ModuleTemplate{}
	require.NoError(t, yaml.Unmarshal(raw, tmpl))
	raw, err = os.ReadFile(samples + "trust-secret.yaml")
	require.NoError(t, err)
	secret := &corev1.Secret{}
	require.NoError(t, yaml.Unmarshal(raw, secret))
	entries := map[string][]byte{}
	for k, v := range secret.StringData {
		entries[k] = []byte(v)
	}
	anchors, err := signature.ParseTrust("Secret "+secret.Name, entries)
	require.NoError(t, err)

	v, err := signature.VerifyTemplate(tmpl, anchors, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "release", v.Name)
	assert.Contains(t, v.Signer, "key release.pub")

	tmpl.Spec.Data.Object["spec"] = map[string]any{"greeting": "edited"}
	_, err = signature.VerifyTemplate(tmpl, anchors, time.Now())
	assert.Equal(t, signature.ReasonModified, signature.ReasonOf(err))
}
