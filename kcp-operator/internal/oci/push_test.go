package oci_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

const component = "kyma-project.io/module/keda"

// moduleDescriptor is what modulectl writes: local blobs addressed by digest
// in the component's repository under baseURL.
func moduleDescriptor(baseURL, version string, blobs map[string]oci.LocalBlob) []byte {
	resources := ""
	for name, b := range blobs {
		resources += fmt.Sprintf(`
  - name: %s
    type: directoryTree
    relation: local
    version: %s
    access: {type: localBlob, localReference: %q, mediaType: %q}`, name, version, oci.Digest(b.Data), b.MediaType)
	}
	return fmt.Appendf(nil, `meta: {schemaVersion: v2}
component:
  name: %s
  version: %s
  provider: kyma-project.io
  repositoryContexts: [{type: OCIRegistry, baseUrl: %q, componentNameMapping: urlPath}]
  resources:%s
`, component, version, baseURL, resources)
}

func TestPushComponentVersionRoundTrip(t *testing.T) {
	reg := startRegistry(t)
	base := reg.host + "/modules"
	raw := oci.LocalBlob{MediaType: "application/x-yaml", Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: keda}\n")}
	config := oci.LocalBlob{MediaType: "application/x-yaml", Data: []byte("replicas: 2\n")}
	const version = "1.2.3-rc.1+7"
	doc := moduleDescriptor(base, version, map[string]oci.LocalBlob{"raw-manifest": raw, "config": config})

	pushed, err := newPusher().PushComponentVersion(t.Context(), doc, []oci.LocalBlob{raw, config}, nil)
	require.NoError(t, err)
	assert.Equal(t, oci.ComponentRepository(base, component), pushed.Repository)
	assert.Equal(t, "1.2.3-rc.1.build-7", pushed.Tag)
	require.Len(t, pushed.Blobs, 2)
	assert.Equal(t, oci.Digest(raw.Data), pushed.Blobs[0].Digest)

	// The layout OCM tools expect, read with go-containerregistry itself.
	ref, err := name.NewTag(pushed.Repository + ":" + pushed.Tag)
	require.NoError(t, err)
	img, err := remote.Image(ref)
	require.NoError(t, err)
	manifest, err := img.Manifest()
	require.NoError(t, err)
	assert.Equal(t, oci.ComponentConfigMediaType, string(manifest.Config.MediaType))
	require.Len(t, manifest.Layers, 3)
	assert.Equal(t, oci.ComponentDescriptorMediaType, string(manifest.Layers[0].MediaType))
	assert.Equal(t, pushed.DescriptorLayer.Digest, manifest.Layers[0].Digest.String())
	assert.Equal(t, oci.Digest(raw.Data), manifest.Layers[1].Digest.String())
	assert.Equal(t, "application/x-yaml", string(manifest.Layers[1].MediaType))
	rawConfig, err := img.RawConfigFile()
	require.NoError(t, err)
	var cfg struct {
		Layer v1.Descriptor `json:"componentDescriptorLayer"`
	}
	require.NoError(t, json.Unmarshal(rawConfig, &cfg))
	assert.Equal(t, manifest.Layers[0].Digest, cfg.Layer.Digest)
	digest, err := img.Digest()
	require.NoError(t, err)
	assert.Equal(t, pushed.Manifest.Digest, digest.String())

	// The operator's path: descriptor → LayerOf → Fetch.
	f := newFetcher(t, oci.Options{})
	stored, err := f.ComponentDescriptor(t.Context(), pushed.Repository, version, nil)
	require.NoError(t, err)
	assert.Equal(t, doc, stored)
	d, err := descriptor.Parse(stored)
	require.NoError(t, err)
	for name, want := range map[string]oci.LocalBlob{"raw-manifest": raw, "config": config} {
		layer, err := d.LayerOf(name)
		require.NoError(t, err)
		blob, err := f.Fetch(t.Context(), oci.RefFromLayer(layer), nil)
		require.NoError(t, err)
		assert.Equal(t, want.Data, blob.Data, name)
	}

	again, err := newPusher().PushComponentVersion(t.Context(), doc, []oci.LocalBlob{raw, config}, nil)
	require.NoError(t, err)
	assert.Equal(t, pushed.Manifest.Digest, again.Manifest.Digest, "publishing is reproducible")
}

func TestPushComponentVersionChecksTheDescriptorFirst(t *testing.T) {
	reg := startRegistry(t)
	base := reg.host + "/modules"
	raw := oci.LocalBlob{MediaType: "application/x-yaml", Data: []byte("kind: Namespace")}
	other := oci.LocalBlob{MediaType: "application/x-yaml", Data: []byte("other")}
	tests := map[string]struct {
		doc     []byte
		blobs   []oci.LocalBlob
		wantErr string
	}{
		"blob missing": {moduleDescriptor(base, "1.0.0", map[string]oci.LocalBlob{"raw-manifest": raw}), nil,
			`resource "raw-manifest": no blob given has its localReference`},
		"blob not referenced": {moduleDescriptor(base, "1.0.0", map[string]oci.LocalBlob{"raw-manifest": raw}), []oci.LocalBlob{raw, other},
			"blob 1 (application/x-yaml, " + oci.Digest(other.Data) + ") is not the localReference of any resource"},
		"no repository context": {[]byte("meta: {schemaVersion: v2}\ncomponent: {name: " + component + ", version: 1.0.0}"), nil,
			"no OCI repository context"},
		"not a descriptor": {[]byte("kind: Deployment"), nil, "neither meta.schemaVersion"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := newPusher().PushComponentVersion(t.Context(), tc.doc, tc.blobs, nil)
			require.ErrorIs(t, err, oci.ErrInvalid)
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Zero(t, reg.total(), "nothing is pushed")
		})
	}
}

func TestPushFailures(t *testing.T) {
	blob := oci.LocalBlob{MediaType: "application/x-yaml", Data: []byte("kind: Namespace")}
	t.Run("wrong credentials", func(t *testing.T) {
		reg := startRegistry(t, requireBasicAuth("u", "p"))
		keys, err := oci.BasicCredentials(reg.host, "u", "wrong")
		require.NoError(t, err)
		doc := moduleDescriptor(reg.host, "1.0.0", map[string]oci.LocalBlob{"raw-manifest": blob})
		_, err = newPusher().PushComponentVersion(t.Context(), doc, []oci.LocalBlob{blob}, keys)
		require.ErrorIs(t, err, oci.ErrUnauthorized)
	})
	t.Run("registry down", func(t *testing.T) {
		reg := startRegistry(t)
		reg.srv.Close()
		_, err := newPusher().PushBlob(t.Context(), reg.repo("modules/x"), blob.Data, blob.MediaType, nil)
		require.ErrorIs(t, err, oci.ErrUnreachable)
		assert.ErrorContains(t, err, reg.repo("modules/x"))
	})
	t.Run("bad repository", func(t *testing.T) {
		_, err := newPusher().PushBlob(t.Context(), "no-host", blob.Data, blob.MediaType, nil)
		require.ErrorIs(t, err, oci.ErrInvalid)
	})
}

func TestPushArtifactIsFetchedByTagAndByImageSpec(t *testing.T) {
	reg := startRegistry(t)
	chart := randomBytes(t, 700)
	const chartType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	pushed, err := newPusher().PushArtifact(t.Context(), reg.repo("charts/keda"), "1.0.0", chart, chartType, "application/vnd.cncf.helm.config.v1+json", nil)
	require.NoError(t, err)

	for name, spec := range map[string]v1beta2.ImageSpec{
		"tag":    {Repo: reg.host + "/charts", Name: "keda", Ref: "1.0.0", Type: v1beta2.RefTypeHelmChart},
		"digest": {Repo: reg.host + "/charts", Name: "keda", Ref: pushed.Digest, Type: v1beta2.RefTypeHelmChart},
	} {
		ref, err := oci.RefFromImageSpec(spec)
		require.NoError(t, err, name)
		blob, err := newFetcher(t, oci.Options{}).Fetch(t.Context(), ref, nil)
		require.NoError(t, err, name)
		assert.Equal(t, chart, blob.Data, name)
		assert.Equal(t, chartType, blob.MediaType, name)
	}
}

func TestRefFromImageSpec(t *testing.T) {
	digest := "sha256:" + fmt.Sprintf("%064d", 1)
	tests := []struct {
		spec    v1beta2.ImageSpec
		want    oci.Ref
		wantErr string
	}{
		{spec: v1beta2.ImageSpec{Repo: "r.example.com/m/component-descriptors", Name: component, Ref: digest},
			want: oci.Ref{Repository: "r.example.com/m/component-descriptors/" + component, Digest: digest}},
		{spec: v1beta2.ImageSpec{Repo: "r.example.com/charts/", Name: "keda", Ref: "1.0.0"},
			want: oci.Ref{Repository: "r.example.com/charts/keda", Tag: "1.0.0", Artifact: true}},
		{spec: v1beta2.ImageSpec{Repo: "r.example.com/keda", Ref: "1.0.0"},
			want: oci.Ref{Repository: "r.example.com/keda", Tag: "1.0.0", Artifact: true}},
		{spec: v1beta2.ImageSpec{Ref: digest}, wantErr: "neither repo nor name"},
		{spec: v1beta2.ImageSpec{Repo: "r.example.com", Name: "keda"}, wantErr: "no ref"},
	}
	for _, tc := range tests {
		got, err := oci.RefFromImageSpec(tc.spec)
		if tc.wantErr != "" {
			require.ErrorIs(t, err, oci.ErrInvalid)
			assert.ErrorContains(t, err, tc.wantErr)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}
