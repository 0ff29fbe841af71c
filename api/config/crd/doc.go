// Package crd embeds the generated CustomResourceDefinitions of the API, so
// that the operator can install them into runtimes and tests into envtest
// without knowing where the repository lives on disk.
package crd

import (
	"embed"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// All returns every CRD of the API, sorted by file name.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(bases, "bases")
	if err != nil {
		return nil, fmt.Errorf("reading embedded CRDs: %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(entries))
	for _, e := range entries {
		raw, err := bases.ReadFile("bases/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading embedded CRD %s: %w", e.Name(), err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return nil, fmt.Errorf("decoding embedded CRD %s: %w", e.Name(), err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// ByKind returns the CRDs of the named kinds, in the order given.
func ByKind(kinds ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(kinds))
	for _, kind := range kinds {
		found := false
		for _, crd := range all {
			if crd.Spec.Names.Kind == kind {
				out = append(out, crd)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("no embedded CRD for kind %q", kind)
		}
	}
	return out, nil
}
