package render

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Media types of module layers. The renderer looks at the content, not at
// the media type (a Manifest's ImageSpec does not carry one), so these are
// what modulectl writes into descriptors, for people and other tools.
const (
	// MediaTypeYAML is a raw-manifest layer that is one YAML stream.
	MediaTypeYAML = "application/x-yaml"
	// MediaTypeTar is a raw-manifest layer that is a tar of YAML files
	// (what modulectl packs from a folder, and what Kyma's tooling writes).
	MediaTypeTar = "application/x-tar"
	// MediaTypeTarGzip is the same tar, gzip-compressed.
	MediaTypeTarGzip = "application/gzip"
	// MediaTypeHelmChart is a helm-chart layer: the chart's .tgz, with
	// Helm's own OCI media type.
	MediaTypeHelmChart = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Limits on raw manifests, against archives that expand without bound.
const (
	// MaxManifestBytes bounds the uncompressed YAML of one layer.
	MaxManifestBytes = 64 << 20
	// MaxManifestFiles bounds the files of one tar.
	MaxManifestFiles = 10000
)

// ParseManifests reads the raw manifests of a module: a multi-document
// YAML (or JSON) stream, a tar of .yaml/.yml/.json files, or either
// gzip-compressed. Files of a tar are read in the order of their names;
// other files, directories and hidden files (".*") are skipped. Empty
// documents are skipped; a "kind: List" is expanded into its items. Every
// object needs apiVersion, kind and metadata.name. Errors are *DocumentError.
func ParseManifests(data []byte) ([]*unstructured.Unstructured, error) {
	parsed, err := parseManifests(data, nil)
	if err != nil {
		return nil, err
	}
	return objectsOf(parsed), nil
}

type parsedObject struct {
	obj    *unstructured.Unstructured
	origin origin
}

func objectsOf(parsed []parsedObject) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(parsed))
	for i, p := range parsed {
		out[i] = p.obj
	}
	return out
}

func parseManifests(data []byte, b *budget) ([]parsedObject, error) {
	limit, over := manifestLimit(b)
	if isGzip(data) {
		plain, err := gunzip(data, limit)
		if errors.Is(err, errExpandsTooMuch) {
			return nil, over("the gzip-compressed manifests expand further")
		}
		if err != nil {
			return nil, &DocumentError{Err: err}
		}
		data = plain
	}
	if int64(len(data)) > limit {
		return nil, over(fmt.Sprintf("the manifests have %d bytes", len(data)))
	}
	if isTar(data) {
		return parseTar(data, b)
	}
	return parseStream(data, "", b)
}

// manifestLimit is the size bound of raw manifests: MaxManifestBytes, or
// the render's lower MaxBytes, which is a LimitError.
func manifestLimit(b *budget) (int64, func(string) error) {
	if b != nil && b.limits.MaxBytes < MaxManifestBytes {
		return b.limits.MaxBytes, func(what string) error { return bytesLimit(b.limits, what) }
	}
	return MaxManifestBytes, func(what string) error {
		return &DocumentError{Err: fmt.Errorf("%s: more than the limit of %d bytes", what, MaxManifestBytes)}
	}
}

func isGzip(data []byte) bool { return len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b }

// isTar looks for the ustar magic of POSIX and GNU tar headers.
func isTar(data []byte) bool { return len(data) >= 512 && string(data[257:262]) == "ustar" }

var errExpandsTooMuch = errors.New("gzip data expand beyond the limit")

func gunzip(data []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading gzip: %w", err)
	}
	defer func() { _ = zr.Close() }() // a reader: nothing to lose
	plain, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading gzip: %w", err)
	}
	if int64(len(plain)) > limit {
		return nil, errExpandsTooMuch
	}
	return plain, nil
}

type tarFile struct {
	name string
	data []byte
}

func parseTar(data []byte, b *budget) ([]parsedObject, error) {
	files, err := readTar(data)
	if err != nil {
		return nil, &DocumentError{Err: err}
	}
	var out []parsedObject
	for _, f := range files {
		objs, err := parseStream(f.data, f.name, b)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func readTar(data []byte) ([]tarFile, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	var files []tarFile
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !isManifestFile(h.Name) {
			continue
		}
		if len(files) == MaxManifestFiles {
			return nil, fmt.Errorf("tar has more than %d manifest files", MaxManifestFiles)
		}
		total += h.Size
		if h.Size < 0 || total > MaxManifestBytes {
			return nil, fmt.Errorf("tar files add up to more than the limit of %d bytes", MaxManifestBytes)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s from tar: %w", h.Name, err)
		}
		files = append(files, tarFile{name: strings.TrimPrefix(path.Clean("/"+h.Name), "/"), data: content})
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, nil
}

func isManifestFile(name string) bool {
	base := path.Base(name)
	if strings.HasPrefix(base, ".") {
		return false
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// parseStream splits a YAML stream into objects, counting them against b
// (nil: no bound).
func parseStream(data []byte, source string, b *budget) ([]parsedObject, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []parsedObject
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		o := origin{source: source, document: doc}
		if err != nil {
			return nil, &DocumentError{Source: source, Document: doc, Err: fmt.Errorf("splitting YAML: %w", err)}
		}
		objs, err := parseDocument(raw)
		if err != nil {
			return nil, &DocumentError{Source: source, Document: doc, Object: objectHint(raw), Err: err}
		}
		for _, obj := range objs {
			if err := b.object(); err != nil {
				return nil, err
			}
			out = append(out, parsedObject{obj: obj, origin: o})
		}
	}
}

// parseDocument decodes one YAML document into objects: none for an empty
// document, the items of a List, else one.
func parseDocument(raw []byte) ([]*unstructured.Unstructured, error) {
	jsonDoc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	jsonDoc = bytes.TrimSpace(jsonDoc)
	if len(jsonDoc) == 0 || string(jsonDoc) == "null" {
		return nil, nil
	}
	if jsonDoc[0] != '{' {
		return nil, errors.New("a document must be an object")
	}
	// utiljson keeps integers as int64, as the unstructured helpers expect.
	var m map[string]any
	if err := utiljson.Unmarshal(jsonDoc, &m); err != nil {
		return nil, fmt.Errorf("invalid object: %w", err)
	}
	obj := &unstructured.Unstructured{Object: m}
	if err := checkHeader(m); err != nil {
		return nil, err
	}
	if obj.GetKind() == "List" && obj.GetAPIVersion() == "v1" {
		return listItems(obj)
	}
	if err := checkObject(obj); err != nil {
		return nil, err
	}
	return []*unstructured.Unstructured{obj}, nil
}

func listItems(list *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	items, ok := list.Object["items"].([]any)
	if !ok && list.Object["items"] != nil {
		return nil, errors.New("items of a List must be a list")
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d of the List is not an object", i)
		}
		obj := &unstructured.Unstructured{Object: m}
		if err := checkObject(obj); err != nil {
			return nil, fmt.Errorf("item %d of the List (%s): %w", i, describe(obj), err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// checkHeader says which of apiVersion and kind is missing.
func checkHeader(m map[string]any) error {
	if s, ok := m["apiVersion"].(string); !ok || s == "" {
		return errors.New("apiVersion is missing or not a string")
	}
	if s, ok := m["kind"].(string); !ok || s == "" {
		return errors.New("kind is missing or not a string")
	}
	return nil
}

// checkObject asks for what server-side apply needs, and rejects
// metadata that later steps would silently overwrite.
func checkObject(obj *unstructured.Unstructured) error {
	if err := checkHeader(obj.Object); err != nil {
		return err
	}
	if _, ok := obj.Object["metadata"].(map[string]any); !ok {
		return errors.New("metadata is missing or not an object")
	}
	for _, field := range []string{"name", "namespace"} {
		if _, found, err := unstructured.NestedString(obj.Object, "metadata", field); err != nil {
			return fmt.Errorf("metadata.%s: %w", field, err)
		} else if field == "name" && !found {
			return errors.New("metadata.name is missing")
		}
	}
	if obj.GetName() == "" {
		return errors.New("metadata.name is empty")
	}
	for _, field := range []string{"labels", "annotations"} {
		if _, _, err := unstructured.NestedStringMap(obj.Object, "metadata", field); err != nil {
			return fmt.Errorf("metadata.%s: %w", field, err)
		}
	}
	return nil
}

// objectHint names the object of a document that failed to decode, when a
// lenient look finds its kind and name.
func objectHint(raw []byte) string {
	var probe struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if yaml.Unmarshal(raw, &probe) != nil || probe.Metadata.Name == "" {
		return ""
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetKind(probe.Kind)
	u.SetName(probe.Metadata.Name)
	u.SetNamespace(probe.Metadata.Namespace)
	return describe(u)
}

// TarManifests packs YAML files (path → content) as modulectl publishes a
// folder: a tar in name order with fixed modes and times, so the same
// files always give the same digest.
func TarManifests(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		if !isManifestFile(name) {
			return nil, fmt.Errorf("%s: only .yaml, .yml and .json files (not hidden) are manifests", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg,
			ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("packing %s: %w", name, err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, fmt.Errorf("packing %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("packing manifests: %w", err)
	}
	return buf.Bytes(), nil
}
