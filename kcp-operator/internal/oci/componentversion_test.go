package oci_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// tarOf packs one file as OCM packs component-descriptor.yaml.
func tarOf(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
	_, err := tw.Write(data)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestComponentVersionFollowsTheConfig stores a component version whose
// descriptor is not layer 0: the config's componentDescriptorLayer names
// it, which is how the public lifecycle manager finds it too.
func TestComponentVersionFollowsTheConfig(t *testing.T) {
	reg := startRegistry(t)
	repo := oci.ComponentRepository(reg.host+"/modules", "kyma-project.io/module/keda")
	doc := []byte("meta: {schemaVersion: v2}\ncomponent: {name: kyma-project.io/module/keda, version: 1.0.0, provider: test}\n")
	ctx := t.Context()
	blob, err := newPusher().PushBlob(ctx, repo, []byte("a local blob"), "application/x-tar", nil)
	require.NoError(t, err)
	descLayer, err := newPusher().PushBlob(ctx, repo, tarOf(t, oci.ComponentDescriptorFile, doc), oci.ComponentDescriptorMediaType, nil)
	require.NoError(t, err)
	layer := func(d oci.Descriptor) map[string]any {
		return map[string]any{"mediaType": d.MediaType, "digest": d.Digest, "size": d.Size}
	}
	config, err := json.Marshal(map[string]any{"componentDescriptorLayer": layer(descLayer)})
	require.NoError(t, err)
	configDesc, err := newPusher().PushBlob(ctx, repo, config, oci.ComponentConfigMediaType, nil)
	require.NoError(t, err)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": layer(configDesc), "layers": []any{layer(blob), layer(descLayer)},
	})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut,
		fmt.Sprintf("http://%s/v2/modules/component-descriptors/kyma-project.io/module/keda/manifests/1.0.0", reg.host), bytes.NewReader(manifest))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	cv, err := newFetcher(t, oci.Options{}).ComponentVersion(ctx, repo, "1.0.0", nil)
	require.NoError(t, err)
	assert.Equal(t, doc, cv.Descriptor)
	assert.Equal(t, descLayer.Digest, cv.DescriptorDigest)
	assert.Equal(t, oci.Digest(manifest), cv.ManifestDigest)

	tags, err := newFetcher(t, oci.Options{}).Tags(ctx, repo, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"1.0.0"}, tags)
	_, err = newFetcher(t, oci.Options{}).Tags(ctx, reg.host+"/modules/component-descriptors/none", nil)
	assert.ErrorIs(t, err, oci.ErrNotFound, "a repository the registry does not know")
}
