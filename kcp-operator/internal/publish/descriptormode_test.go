package publish_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

func TestPublishLeavesTheDescriptorInTheRegistryUnlessEmbedding(t *testing.T) {
	reg := startRegistry(t)
	req := rawRequest(reg)
	req.EmbedDescriptor = false
	res, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(res.Template.Spec.Descriptor.Raw), "descriptor: {}, as the public modulectl writes it")
	require.NotNil(t, res.ReleaseMeta)
	assert.Equal(t, res.Component, res.ReleaseMeta.Spec.OcmComponentName, "the operator finds the component through it")

	_, err = publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template}, publish.Access{})
	assert.ErrorContains(t, err, "pass --registry")
	v, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template, Registry: req.Registry}, publish.Access{})
	require.NoError(t, err)
	assert.Equal(t, res.Component, v.Component)
	assert.NotEmpty(t, v.Objects, "the module's layers are found through the registry's descriptor")

	req.Version, req.EmbedDescriptor = "0.1.1", true
	embedded, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	d, err := signature.DigestOf(embedded.Template.Spec.Descriptor.Raw)
	require.NoError(t, err)
	assert.NotEmpty(t, d.Value, "with EmbedDescriptor the template carries the descriptor")
}
