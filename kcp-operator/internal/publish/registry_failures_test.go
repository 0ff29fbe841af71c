package publish_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
)

func TestRegistryFailures(t *testing.T) {
	private := startRegistry(t, requireBasicAuth("team", "s3cret"))
	tests := map[string]struct {
		registry string
		access   publish.Access
		kind     error
		msg      string
	}{
		"unreachable": {
			registry: closedAddress(t) + "/modules", kind: oci.ErrUnreachable, msg: "registry unreachable",
		},
		"wrong password": {
			registry: private.base(), access: publish.Access{Username: "team", Password: "guess"},
			kind: oci.ErrUnauthorized, msg: "registry denied access",
		},
		"no login": {
			registry: private.base(), kind: oci.ErrUnauthorized, msg: "registry denied access",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := rawRequest(private)
			req.Registry = tc.registry
			_, err := publish.Publish(t.Context(), req, tc.access)
			require.Error(t, err)
			t.Log(err)
			assert.ErrorIs(t, err, publish.ErrRegistry)
			assert.ErrorIs(t, err, tc.kind)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, publish.ExitRegistry, publish.ExitCode(err))
		})
	}
	assert.Zero(t, private.writes(), "nothing was uploaded without the right login")
}

func TestLoginFromFlagsAndFromTheDockerConfig(t *testing.T) {
	reg := startRegistry(t, requireBasicAuth("team", "s3cret"))
	res, err := publish.Publish(t.Context(), rawRequest(reg), publish.Access{Username: "team", Password: "s3cret"})
	require.NoError(t, err)
	_, err = publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template}, publish.Access{Username: "team", Password: "s3cret"})
	require.NoError(t, err)

	dockerConfig(t, reg.host, "team", "s3cret")
	again, err := publish.Publish(t.Context(), rawRequest(reg), publish.Access{})
	require.NoError(t, err)
	assert.True(t, again.Unchanged)
	_, err = publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template}, publish.Access{})
	require.NoError(t, err)
}

func TestVerifyFindsWhatDoesNotHoldUp(t *testing.T) {
	reg := startRegistry(t)
	res, err := publish.Publish(t.Context(), rawRequest(reg), publish.Access{})
	require.NoError(t, err)
	digest := res.Layers[0].Digest

	t.Run("template edited after publishing", func(t *testing.T) {
		tmpl := res.Template.DeepCopy()
		other := oci.Digest([]byte("other content"))
		tmpl.Spec.Descriptor.Raw = []byte(strings.ReplaceAll(string(tmpl.Spec.Descriptor.Raw), digest, other))
		_, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: tmpl}, publish.Access{})
		require.ErrorIs(t, err, publish.ErrVerification)
		assert.Contains(t, err.Error(), "the registry holds another descriptor for kyma-project.io/module/sample:0.1.0")
	})
	t.Run("default CR of a kind the module does not define", func(t *testing.T) {
		tmpl := res.Template.DeepCopy()
		tmpl.Spec.Data.SetKind("Other")
		_, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: tmpl}, publish.Access{})
		require.ErrorIs(t, err, publish.ErrVerification)
		assert.Contains(t, err.Error(), "kind Other.modules.example.io is not defined by a CRD")
	})
	t.Run("version not published", func(t *testing.T) {
		req := rawRequest(reg)
		req.Version, req.DryRun = "0.2.0", true
		unpublished, err := publish.Publish(t.Context(), req, publish.Access{})
		require.NoError(t, err)
		_, err = publish.Verify(t.Context(), publish.VerifyRequest{Template: unpublished.Template}, publish.Access{})
		require.ErrorIs(t, err, publish.ErrRegistry)
		assert.Contains(t, err.Error(), "kyma-project.io/module/sample:0.2.0 is not published in "+res.Repository)
	})
	t.Run("descriptor that is not one", func(t *testing.T) {
		tmpl := res.Template.DeepCopy()
		tmpl.Spec.Descriptor.Raw = json.RawMessage(`{"meta":{"schemaVersion":"v2"},"component":{"name":"sample"}}`)
		_, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: tmpl}, publish.Access{})
		require.ErrorIs(t, err, publish.ErrInvalidInput)
		assert.Contains(t, err.Error(), "spec.descriptor")
	})
	t.Run("registry serving a layer that does not match its digest", func(t *testing.T) {
		reg.corruptBlob(digest)
		defer reg.corruptBlob("")
		_, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template}, publish.Access{})
		require.ErrorIs(t, err, publish.ErrVerification)
		assert.ErrorIs(t, err, oci.ErrDigestMismatch)
		assert.Equal(t, publish.ExitVerification, publish.ExitCode(err))
	})
}
