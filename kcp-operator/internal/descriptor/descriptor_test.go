package descriptor_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
)

func parseFile(t *testing.T, name string) *descriptor.Descriptor {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	d, err := descriptor.Parse(raw)
	require.NoError(t, err)
	return d
}

func TestParseV2(t *testing.T) {
	d := parseFile(t, "keda-v2.yaml")
	assert.Equal(t, descriptor.SchemaV2, d.SchemaVersion)
	assert.Equal(t, "kyma-project.io/module/keda", d.Name)
	assert.Equal(t, "1.6.0", d.Version)
	assert.Equal(t, "kyma-project.io", d.Provider, "the provider JSON-in-a-string is unpacked")
	require.Len(t, d.Resources, 3)
	scan, ok := d.Label("security.kyma-project.io/scan")
	require.True(t, ok)
	assert.JSONEq(t, `"enabled"`, string(scan))

	repo, err := d.OCIRepository()
	require.NoError(t, err)
	assert.Equal(t, "europe-docker.pkg.dev/kyma-project/prod/unsigned/component-descriptors/kyma-project.io/module/keda", repo)

	raw, err := d.LayerOf("raw-manifest")
	require.NoError(t, err)
	assert.Equal(t, repo+"@sha256:3b2c8a6ef0d7f1a25c6e4b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d", raw.Ref())
	assert.False(t, raw.Artifact)
	assert.Equal(t, "application/x-tar", raw.MediaType)

	versioned, err := d.LayerOf("default-cr")
	require.NoError(t, err, "localBlob/v1 is localBlob")
	assert.Equal(t, repo, versioned.Repository)

	image, err := d.LayerOf("keda-manager")
	require.NoError(t, err)
	assert.True(t, image.Artifact)
	assert.Equal(t, "europe-docker.pkg.dev/kyma-project/prod/keda-manager:1.6.0", image.Ref())
}

func TestParseV3Alpha1(t *testing.T) {
	d := parseFile(t, "serverless-v3alpha1.yaml")
	assert.Equal(t, descriptor.SchemaV3Alpha1, d.SchemaVersion)
	assert.Equal(t, "kyma-project.io/module/serverless", d.Name)
	assert.Equal(t, "kyma-project.io", d.Provider)

	repo, err := d.OCIRepository()
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com/modules/component-descriptors/kyma-project.io/module/serverless", repo)

	chart, err := d.LayerOf("helm-chart")
	require.NoError(t, err)
	assert.Equal(t, "mirror.example.com/serverless-chart@sha256:2222222222222222222222222222222222222222222222222222222222222222",
		chart.Ref(), "a global access wins over the local blob")

	cfg, err := d.LayerOf("config")
	require.NoError(t, err)
	assert.Equal(t, "registry.example.com/modules/serverless-config", cfg.Repository)
}

func TestParseJSONFromTheAPIServer(t *testing.T) {
	// spec.descriptor reaches the operator as JSON.
	d, err := descriptor.Parse([]byte(`{"meta":{"schemaVersion":"v2"},"component":{"name":"example.com/m",` +
		`"version":"0.1.0","provider":"example","repositoryContexts":[],"resources":[]}}`))
	require.NoError(t, err)
	assert.Equal(t, "example", d.Provider)
	_, err = d.OCIRepository()
	assert.ErrorContains(t, err, "no OCI repository context")
}

func TestParseJSONAndYAMLAgree(t *testing.T) {
	for _, name := range []string{"keda-v2.yaml", "serverless-v3alpha1.yaml"} {
		raw, err := os.ReadFile("testdata/" + name)
		require.NoError(t, err)
		asJSON, err := yaml.YAMLToJSON(raw)
		require.NoError(t, err)
		fromJSON, err := descriptor.Parse(append([]byte("\n  "), asJSON...))
		require.NoError(t, err)
		assert.Equal(t, parseFile(t, name), fromJSON, "%s read as JSON as from the API server, and as YAML", name)
	}
	// A YAML flow mapping starts like JSON but is not JSON.
	d, err := descriptor.Parse([]byte("{meta: {schemaVersion: v2}, component: {name: kyma-project.io/module/keda, version: 1.0.0}}"))
	require.NoError(t, err)
	assert.Equal(t, "kyma-project.io/module/keda", d.Name)
}

func TestParseRejectsMalformedDescriptors(t *testing.T) {
	valid := func(mut string) string {
		return "meta: {schemaVersion: v2}\ncomponent:\n  name: kyma-project.io/module/keda\n  version: 1.0.0\n" + mut
	}
	tests := []struct {
		name    string
		doc     string
		wantErr string
	}{
		{"empty", "", "empty"},
		{"not yaml", "{[", "neither JSON nor YAML"},
		{"a list", "- a\n- b\n", "not an object"},
		{"no schema", "component: {name: a.io/b}", "neither meta.schemaVersion"},
		{"v1 schema", "meta: {schemaVersion: v1}\ncomponent: {}", `"v1" is not supported`},
		{"unknown apiVersion", "apiVersion: ocm.software/v9\nkind: ComponentVersion", `"ocm.software/v9" is not supported`},
		{"wrong v3 kind", "apiVersion: ocm.software/v3alpha1\nkind: Component", "kind"},
		{"no name", "meta: {schemaVersion: v2}\ncomponent: {version: 1.0.0}", "name is missing"},
		{"bad name", "meta: {schemaVersion: v2}\ncomponent: {name: keda, version: 1.0.0}", "not a valid OCM component name"},
		{"no version", "meta: {schemaVersion: v2}\ncomponent: {name: kyma-project.io/module/keda}", "has no version"},
		{"resource without name", valid("  resources: [{type: directory, access: {type: localBlob, localReference: x}}]"), "resources[0].name is missing"},
		{"duplicate resource", valid("  resources:\n  - {name: a, type: t, access: {type: ociArtifact, imageReference: r:1}}\n  - {name: a, type: t, access: {type: ociArtifact, imageReference: r:1}}"), `"a" is used by resources[0]`},
		{"resource without type", valid("  resources: [{name: a, access: {type: localBlob, localReference: x}}]"), "type is missing"},
		{"resource without access type", valid("  resources: [{name: a, type: t, access: {}}]"), "access: type is missing"},
		{"local blob without reference", valid("  resources: [{name: a, type: t, access: {type: localBlob}}]"), "localReference is missing"},
		{"oci blob without digest", valid("  resources: [{name: a, type: t, access: {type: ociBlob, ref: r}}]"), "needs ref and digest"},
		{"bad global access", valid("  resources: [{name: a, type: t, access: {type: localBlob, localReference: x, globalAccess: {type: ociArtifact}}}]"), "globalAccess: imageReference is missing"},
		{"provider of the wrong type", valid("  provider: 42"), "component.provider"},
		{"resources not a list", valid("  resources: {a: b}"), "decoding v2 descriptor"},
		{"too large", "meta: {schemaVersion: v2}\n#" + strings.Repeat("x", descriptor.MaxSize), "more than the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := descriptor.Parse([]byte(tc.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestLayerOfRejectsWhatCannotBeFetched(t *testing.T) {
	d, err := descriptor.Parse([]byte(`meta: {schemaVersion: v2}
component:
  name: kyma-project.io/module/keda
  version: 1.0.0
  repositoryContexts: [{type: OCIRegistry, baseUrl: r.example.com, componentNameMapping: sha256-digest}]
  resources:
  - {name: bad-digest, type: t, access: {type: localBlob, localReference: "sha256:abc"}}
  - {name: git, type: t, access: {type: gitHub, repoUrl: x}}
  - {name: untagged, type: t, access: {type: ociArtifact, imageReference: "r.example.com:5000/img"}}
  - {name: mapped, type: t, access: {type: localBlob, localReference: "sha256:1111111111111111111111111111111111111111111111111111111111111111"}}
`))
	require.NoError(t, err)
	tests := map[string]string{
		"bad-digest": "not a sha256 digest",
		"git":        `access type "gitHub" is not supported`,
		"untagged":   "neither a tag nor a digest",
		"mapped":     `"sha256-digest" is not supported`,
		"missing":    `has no resource "missing"`,
	}
	for name, wantErr := range tests {
		_, err := d.LayerOf(name)
		assert.ErrorContains(t, err, wantErr, name)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"keda-v2.yaml", "serverless-v3alpha1.yaml"} {
		raw, err := os.ReadFile("testdata/" + name)
		require.NoError(f, err)
		f.Add(raw)
	}
	f.Add([]byte(`{"meta":{"schemaVersion":"v2"},"component":{"name":"a.io/b","version":"1"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := descriptor.Parse(raw)
		if err != nil {
			return
		}
		// A descriptor that parses must be usable without panics.
		_, _ = d.OCIRepository()
		for _, r := range d.Resources {
			_, _ = d.LayerOf(r.Name)
		}
	})
}

func TestAbsent(t *testing.T) {
	for raw, want := range map[string]bool{"": true, "null": true, "{}": true, " { \n } ": true, "{": false, `{"meta":{}}`: false, "meta: {}": false} {
		assert.Equal(t, want, descriptor.Absent([]byte(raw)), "%q", raw)
	}
}
