package publish

import (
	"errors"
	"testing"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Files given to --release-meta and --template are hand-edited: whatever
// they hold gives an error of kind ErrInvalidInput or a usable object,
// never a panic, and merging into a usable one assigns the channel.
func FuzzReleaseMetaAndTemplateFiles(f *testing.F) {
	f.Add([]byte(`apiVersion: operator.kyma-project.io/v1beta2
kind: ModuleReleaseMeta
metadata: {name: sample, namespace: kcp-system}
spec:
  moduleName: sample
  channels: [{channel: fast, version: 0.0.9}, {channel: regular, version: 0.0.8}]
`))
	f.Add([]byte(`apiVersion: operator.kyma-project.io/v1beta2
kind: ModuleReleaseMeta
metadata: {name: sample}
spec: {mandatory: {version: 1.0.0}, channels: 3}
`))
	f.Add([]byte(`apiVersion: operator.kyma-project.io/v1beta2
kind: ModuleTemplate
metadata: {name: sample-1.0.0}
spec: {moduleName: sample, version: 1.0.0, data: {apiVersion: x/v1, kind: X, metadata: {name: d}}, descriptor: {meta: {schemaVersion: v2}}}
`))
	f.Add([]byte("kind: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mrm := &v1beta2.ModuleReleaseMeta{}
		err := decodeObject("--release-meta", "fuzz.yaml", data, v1beta2.ModuleReleaseMetaKind, mrm)
		checkKind(t, err)
		if err == nil {
			merged, err := mergeReleaseMeta(mrm, releaseInput{
				module: "sample", component: "kyma-project.io/module/sample", version: "1.0.0",
				namespace: DefaultNamespace, channels: []string{"regular"},
			})
			if err == nil {
				if v, ok := merged.VersionFor("regular"); !ok || v != "1.0.0" {
					t.Fatalf("merged channels %v lack regular: 1.0.0", merged.Spec.Channels)
				}
			}
		}
		checkKind(t, decodeObject("--template", "fuzz.yaml", data, v1beta2.ModuleTemplateKind, &v1beta2.ModuleTemplate{}))
	})
}

func checkKind(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("error of no kind: %v", err)
	}
}
