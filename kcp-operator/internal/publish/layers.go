package publish

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// Resource names of a module's layers in its descriptor: the names the
// operator's Kyma controller looks for.
const (
	ResourceRawManifest = "raw-manifest"
	ResourceHelmChart   = "helm-chart"
	ResourceConfig      = "config"
)

// OCM resource types of the layers. The operator goes by resource name;
// the types are for people and OCM tools.
const (
	TypeDirectoryTree = "directoryTree"
	TypeYAML          = "yaml"
	TypeHelmChart     = "helmChart"
)

// maxInputBytes bounds every file read, against a wrong path to a huge file.
const maxInputBytes = render.MaxManifestBytes

// Layer is one resource of a module, ready to push.
type Layer struct {
	// Name is the descriptor resource name (ResourceRawManifest, …).
	Name string
	// Type is the OCM resource type.
	Type string
	// MediaType of Data.
	MediaType string
	// Source is the file or folder it was read from.
	Source string
	// Data is the content; its digest is the localReference.
	Data []byte
}

// Digest is the layer's sha256 digest.
func (l Layer) Digest() string { return oci.Digest(l.Data) }

// readFile reads an input file with a size bound; errors name the flag.
func readFile(flag, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, invalid("%s %s: %w", flag, path, unwrapPathError(err))
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	data, err := io.ReadAll(io.LimitReader(f, maxInputBytes+1))
	if err != nil {
		return nil, invalid("%s %s: %w", flag, path, unwrapPathError(err))
	}
	if len(data) > maxInputBytes {
		return nil, invalid("%s %s: larger than the limit of %d bytes", flag, path, maxInputBytes)
	}
	return data, nil
}

// unwrapPathError drops the *fs.PathError around a cause, whose message
// would repeat the path the caller already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readManifests packs raw manifests: a folder becomes a tar of its
// manifest files (as the operator reads them), a file is taken as it is.
func readManifests(path string) (Layer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Layer{}, invalid("--manifest %s: %w", path, unwrapPathError(err))
	}
	if !info.IsDir() {
		data, err := readFile("--manifest", path)
		if err != nil {
			return Layer{}, err
		}
		l := Layer{Name: ResourceRawManifest, Type: TypeYAML, MediaType: render.MediaTypeYAML, Source: path, Data: data}
		switch lower := strings.ToLower(path); {
		case strings.HasSuffix(lower, ".tar"):
			l.Type, l.MediaType = TypeDirectoryTree, render.MediaTypeTar
		case strings.HasSuffix(lower, ".tgz"), strings.HasSuffix(lower, ".tar.gz"):
			l.Type, l.MediaType = TypeDirectoryTree, render.MediaTypeTarGzip
		}
		return l, nil
	}
	files, err := manifestFiles(path)
	if err != nil {
		return Layer{}, err
	}
	data, err := render.TarManifests(files)
	if err != nil {
		return Layer{}, invalid("--manifest %s: %w", path, err)
	}
	return Layer{Name: ResourceRawManifest, Type: TypeDirectoryTree, MediaType: render.MediaTypeTar, Source: path, Data: data}, nil
}

// manifestFiles reads the .yaml, .yml and .json files under dir, by path
// relative to dir; hidden files and folders (.git) are skipped.
func manifestFiles(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		hidden := strings.HasPrefix(d.Name(), ".") && p != dir
		if d.IsDir() {
			if hidden {
				return filepath.SkipDir
			}
			return nil
		}
		if hidden || !d.Type().IsRegular() || !isManifestName(d.Name()) {
			return nil
		}
		if len(files) == render.MaxManifestFiles {
			return fmt.Errorf("more than %d manifest files", render.MaxManifestFiles)
		}
		data, err := readFile("--manifest", p)
		if err != nil {
			return err
		}
		if total += len(data); total > render.MaxManifestBytes {
			return fmt.Errorf("the files add up to more than the limit of %d bytes", render.MaxManifestBytes)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	var pe *Error
	switch {
	case errors.As(err, &pe):
		return nil, err
	case err != nil:
		return nil, invalid("--manifest %s: %w", dir, unwrapPathError(err))
	case len(files) == 0:
		return nil, invalid("--manifest %s: the folder has no .yaml, .yml or .json files", dir)
	}
	return files, nil
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// readConfig reads Helm values, which must be a YAML map.
func readConfig(path string) (Layer, error) {
	data, err := readFile("--config", path)
	if err != nil {
		return Layer{}, err
	}
	if _, err := chartutil.ReadValues(data); err != nil {
		return Layer{}, invalid("--config %s: not a YAML map of Helm values: %w", path, err)
	}
	return Layer{Name: ResourceConfig, Type: TypeYAML, MediaType: render.MediaTypeYAML, Source: path, Data: data}, nil
}

// readDefaultCR reads the one object of the default CR file.
func readDefaultCR(path string) (*unstructured.Unstructured, error) {
	data, err := readFile("--default-cr", path)
	if err != nil {
		return nil, err
	}
	objs, err := render.ParseManifests(data)
	if err != nil {
		return nil, invalid("--default-cr %s: %w", path, err)
	}
	if len(objs) != 1 {
		return nil, invalid("--default-cr %s: want exactly one object, found %d", path, len(objs))
	}
	return objs[0], nil
}
