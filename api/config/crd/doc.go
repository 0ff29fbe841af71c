// Package crd embeds the generated CustomResourceDefinitions of the API, so
// that the operator can install them into runtimes and tests into envtest
// without knowing where the repository lives on disk.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// All returns every CRD of the API, sorted by file name. The CRDs are
// decoded once per process (the operator installs them into every runtime
// it meets); callers get their own copies to change.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	decoded, err := decodeOnce()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(decoded))
	for i, c := range decoded {
		out[i] = c.DeepCopy()
	}
	return out, nil
}

var decodeOnce = sync.OnceValues(decode)

func decode() ([]*apiextensionsv1.CustomResourceDefinition, error) {
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
	all, err := decodeOnce()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(kinds))
	for _, kind := range kinds {
		found := false
		for _, crd := range all {
			if crd.Spec.Names.Kind == kind {
				out = append(out, crd.DeepCopy())
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
