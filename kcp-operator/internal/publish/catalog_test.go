package publish_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

const existingReleaseMeta = `apiVersion: operator.kyma-project.io/v1beta2
kind: ModuleReleaseMeta
metadata:
  name: sample
  namespace: kcp-system
  labels: {team: samples}
spec:
  moduleName: sample
  beta: true
  channels:
    - {channel: fast, version: 0.0.9}
    - {channel: experimental, version: 0.0.8}
`

func TestReleaseMetaIsMergedIntoTheExistingFile(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "sample-mrm.yaml", existingReleaseMeta)
	req := rawRequest(startRegistry(t))
	req.DryRun, req.ReleaseMeta, req.Channels = true, path, []string{"fast", "regular"}
	res, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	mrm := res.ReleaseMeta
	assert.Equal(t, []v1beta2.ChannelVersionAssignment{
		{Channel: "fast", Version: "0.1.0"},
		{Channel: "experimental", Version: "0.0.8"},
		{Channel: "regular", Version: "0.1.0"},
	}, mrm.Spec.Channels)
	assert.True(t, mrm.Spec.Beta, "other fields stay")
	assert.Equal(t, "samples", mrm.Labels["team"])
	assert.Equal(t, "sample", mrm.Labels[shared.ModuleNameLabel])
	assert.Equal(t, "kyma-project.io/module/sample", mrm.Spec.OcmComponentName)

	req.Channels, req.Mandatory = nil, true
	_, err = publish.Publish(t.Context(), req, publish.Access{})
	require.ErrorIs(t, err, publish.ErrInvalidInput)
	assert.Contains(t, err.Error(), "it assigns channels; a mandatory module has none")

	req.ReleaseMeta = filepath.Join(dir, "new-mrm.yaml") // need not exist
	res, err = publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	assert.Equal(t, &v1beta2.Mandatory{Version: "0.1.0"}, res.ReleaseMeta.Spec.Mandatory)
	assert.Empty(t, res.ReleaseMeta.Spec.Channels)
	assert.True(t, res.Template.Spec.Mandatory)
}

func TestWrittenTemplateReadsBack(t *testing.T) {
	req := chartRequest(startRegistry(t))
	req.DryRun = true
	res, err := publish.Publish(t.Context(), req, publish.Access{})
	require.NoError(t, err)
	doc, err := publish.EncodeYAML(res.Template, res.ReleaseMeta)
	require.NoError(t, err)
	assert.NotContains(t, string(doc), "creationTimestamp")
	path := filepath.Join(t.TempDir(), "sample.yaml")
	require.NoError(t, publish.WriteFile(path, doc))

	tmpl, err := publish.ReadTemplate(path)
	require.NoError(t, err)
	assert.Equal(t, res.Template.Spec.Version, tmpl.Spec.Version)
	assert.JSONEq(t, string(res.Template.Spec.Descriptor.Raw), string(tmpl.Spec.Descriptor.Raw))
	assert.Equal(t, res.Template.Spec.Data.Object, tmpl.Spec.Data.Object)
	mrm, err := publish.ReadReleaseMeta(path)
	require.NoError(t, err)
	assert.Equal(t, res.ReleaseMeta.Spec, mrm.Spec)

	_, err = publish.ReadTemplate("testdata/default-cr.yaml")
	require.ErrorIs(t, err, publish.ErrInvalidInput)
	assert.Contains(t, err.Error(), "--template testdata/default-cr.yaml: no ModuleTemplate in the file")
}

// What modulectl writes is accepted by a real kube-apiserver with the
// operator's CRDs (their patterns, embedded-resource and CEL rules).
func TestTemplatesAndReleaseMetasAreAcceptedByTheAPIServer(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: publish.DefaultNamespace}}
	require.NoError(t, env.Client.Create(t.Context(), ns))
	reg := startRegistry(t)

	mandatory := rawRequest(reg)
	mandatory.Channels, mandatory.Mandatory = nil, true
	for name, req := range map[string]publish.Request{"raw": rawRequest(reg), "chart": chartRequest(reg), "mandatory": mandatory} {
		t.Run(name, func(t *testing.T) {
			req.DryRun = true
			res, err := publish.Publish(t.Context(), req, publish.Access{})
			require.NoError(t, err)
			doc, err := publish.EncodeYAML(res.Template, res.ReleaseMeta)
			require.NoError(t, err)
			objs, err := render.ParseManifests(doc)
			require.NoError(t, err)
			require.Len(t, objs, 2)
			for _, obj := range objs {
				require.NoError(t, env.Client.Create(t.Context(), obj, client.DryRunAll), "%s %s", obj.GetKind(), obj.GetName())
			}
		})
	}
}
