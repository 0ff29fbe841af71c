package publish_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

func TestMain(m *testing.M) {
	// Hermetic logins: no Docker config of the machine.
	dir, err := os.MkdirTemp("", "modulectl-docker-")
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("DOCKER_CONFIG", dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func rawRequest(reg *testRegistry) publish.Request {
	return publish.Request{
		Name: "sample", Version: "0.1.0", Manifests: "testdata/raw", DefaultCR: "testdata/default-cr.yaml",
		Registry: reg.base(), Channels: []string{"regular"}, EmbedDescriptor: true,
	}
}

func chartRequest(reg *testRegistry) publish.Request {
	return publish.Request{
		Name: "sample", Version: "0.3.0-rc.1+build.7", Chart: "testdata/chart/sample", Config: "testdata/chart-config.yaml",
		DefaultCR: "testdata/default-cr.yaml", Registry: "http://" + reg.base(), Channels: []string{"fast", "regular"},
		EmbedDescriptor: true,
	}
}

func TestPublishRawManifestModuleThenVerify(t *testing.T) {
	reg := startRegistry(t)
	var progress bytes.Buffer
	res, err := publish.Publish(t.Context(), rawRequest(reg), publish.Access{Progress: &progress})
	require.NoError(t, err)

	assert.Equal(t, "kyma-project.io/module/sample", res.Component)
	assert.Equal(t, reg.base()+"/component-descriptors/kyma-project.io/module/sample", res.Repository)
	assert.NotEmpty(t, res.ManifestDigest)
	require.Len(t, res.Layers, 1)
	layer := res.Layers[0]
	assert.Equal(t, publish.ResourceRawManifest, layer.Name)
	assert.Equal(t, render.MediaTypeTar, layer.MediaType)
	assert.Contains(t, progress.String(), layer.Digest, "progress names the digest")
	assert.Contains(t, progress.String(), "KiB", "progress names the size")
	assert.Contains(t, progress.String(), res.ManifestDigest)
	assert.Equal(t, 5, res.Objects)

	tmpl := res.Template
	assert.Equal(t, "sample-0.1.0", tmpl.Name)
	assert.Equal(t, publish.DefaultNamespace, tmpl.Namespace)
	assert.Equal(t, "sample", tmpl.Labels[shared.ModuleNameLabel])
	assert.Equal(t, "sample", tmpl.Spec.ModuleName)
	assert.Equal(t, "0.1.0", tmpl.Spec.Version)
	require.NotNil(t, tmpl.Spec.Data)
	assert.Equal(t, "Sample", tmpl.Spec.Data.GetKind())
	require.NotNil(t, tmpl.Spec.Manager)
	assert.Equal(t, v1beta2.Manager{Name: "sample-manager", Namespace: "kyma-system",
		GroupVersionKind: tmpl.Spec.Manager.GroupVersionKind}, *tmpl.Spec.Manager)
	assert.Equal(t, "apps/v1, Kind=Deployment", tmpl.Spec.Manager.String())
	d, err := descriptor.Parse(tmpl.Spec.Descriptor.Raw)
	require.NoError(t, err)
	where, err := d.LayerOf(publish.ResourceRawManifest)
	require.NoError(t, err)
	assert.Equal(t, res.Repository+"@"+layer.Digest, where.Ref())

	mrm := res.ReleaseMeta
	require.NotNil(t, mrm)
	assert.Equal(t, "sample", mrm.Name)
	assert.Equal(t, res.Component, mrm.Spec.OcmComponentName)
	assert.Equal(t, []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "0.1.0"}}, mrm.Spec.Channels)

	progress.Reset()
	v, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: tmpl}, publish.Access{Progress: &progress})
	require.NoError(t, err)
	assert.Equal(t, string(render.RawManifest), v.Type)
	assert.Contains(t, progress.String(), layer.Digest+"  "+render.MediaTypeTar+"  digest verified")
	require.NotNil(t, v.DefaultCR)
	assert.Equal(t, "kyma-system", v.DefaultCR.GetNamespace(), "the operator creates the default CR in the runtime namespace")
	assert.Equal(t, objectJSON(t, operatorRender(t, tmpl)), objectJSON(t, v.Objects),
		"verify shows exactly what the operator renders from the published layers")
	assert.Equal(t, "CustomResourceDefinition", v.Objects[0].GetKind(), "sorted for apply")
}

func TestPublishHelmChartModuleWithConfigThenVerify(t *testing.T) {
	reg := startRegistry(t)
	res, err := publish.Publish(t.Context(), chartRequest(reg), publish.Access{})
	require.NoError(t, err)
	require.Len(t, res.Layers, 2)
	assert.Equal(t, publish.ResourceHelmChart, res.Layers[0].Name)
	assert.Equal(t, render.MediaTypeHelmChart, res.Layers[0].MediaType)
	assert.Equal(t, publish.ResourceConfig, res.Layers[1].Name)
	assert.Equal(t, "0.3.0-rc.1.build-build.7", res.Tag, `OCI tags write the "+" of build metadata as ".build-"`)
	assert.Equal(t, "sample-0.3.0-rc.1-build.7", res.Template.Name)
	require.NotNil(t, res.Template.Spec.Manager)
	assert.Equal(t, "sample-manager", res.Template.Spec.Manager.Name)
	assert.Len(t, res.ReleaseMeta.Spec.Channels, 2)

	v, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template}, publish.Access{})
	require.NoError(t, err)
	assert.Equal(t, string(render.HelmChart), v.Type)
	require.Len(t, v.Layers, 2)
	want := operatorRender(t, res.Template)
	assert.Equal(t, objectJSON(t, want), objectJSON(t, v.Objects))

	deployment := find(t, v.Objects, "Deployment", "sample-manager")
	replicas, _, _ := unstructured.NestedInt64(deployment.Object, "spec", "replicas")
	assert.Equal(t, int64(3), replicas, "the config layer's values are laid over the chart's defaults")
	config := find(t, v.Objects, "ConfigMap", "sample-config")
	assert.Equal(t, "hello from the config layer", config.Object["data"].(map[string]any)["greeting"])
	assert.Equal(t, "kyma-system", config.GetNamespace())
}

func TestPublishingAgainIsReproducible(t *testing.T) {
	reg := startRegistry(t)
	first, err := publish.Publish(t.Context(), chartRequest(reg), publish.Access{})
	require.NoError(t, err)
	assert.False(t, first.Unchanged)
	again, err := publish.Publish(t.Context(), chartRequest(reg), publish.Access{})
	require.NoError(t, err)
	assert.True(t, again.Unchanged, "the same chart folder packs to the same digest")
	assert.Equal(t, first.Layers, again.Layers)
	assert.Equal(t, first.ManifestDigest, again.ManifestDigest)
}

func TestPublishedVersionsAreNotReplacedWithOtherContent(t *testing.T) {
	reg := startRegistry(t)
	req := rawRequest(reg)
	_, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)

	dir := t.TempDir()
	for _, f := range []string{"00-crd.yaml", "20-manager.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata/raw", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o600))
	}
	req.Manifests = dir
	writes := reg.writes()
	_, err = publish.Publish(t.Context(), req, publish.Access{})
	require.ErrorIs(t, err, publish.ErrInvalidInput)
	assert.Contains(t, err.Error(), "kyma-project.io/module/sample:0.1.0 is already published with other content")
	assert.Equal(t, writes, reg.writes(), "nothing pushed")

	req.Overwrite = true
	res, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	v, err := publish.Verify(t.Context(), publish.VerifyRequest{Template: res.Template}, publish.Access{})
	require.NoError(t, err)
	assert.Len(t, v.Objects, 2, "the CRD and the Deployment of the new content")
}

func TestDryRunPushesNothing(t *testing.T) {
	reg := startRegistry(t)
	req := rawRequest(reg)
	req.DryRun = true
	res, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	assert.Zero(t, reg.count())
	assert.Empty(t, res.ManifestDigest)
	require.NotNil(t, res.Template)

	req.DryRun = false
	pushed, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	assert.Equal(t, res.Template, pushed.Template, "a dry run writes the template that publishing writes")
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s among %d objects", kind, name, len(objs))
	return nil
}

func objectJSON(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	out := make([]string, len(objs))
	for i, o := range objs {
		raw, err := o.MarshalJSON()
		require.NoError(t, err)
		out[i] = string(raw)
	}
	return out
}
