package render_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// rawModuleFiles reads testdata/raw: a module with CRDs, a namespace, RBAC
// and a manager Deployment.
func rawModuleFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir("testdata/raw")
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata/raw", e.Name()))
		require.NoError(t, err)
		files[e.Name()] = data
	}
	return files
}

// rawModuleStream is the same module as one YAML stream.
func rawModuleStream(t testing.TB) []byte {
	t.Helper()
	files := rawModuleFiles(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, n := range names {
		buf.WriteString("---\n")
		buf.Write(files[n])
		buf.WriteString("\n")
	}
	return buf.Bytes()
}

// packChart packs a chart directory as `helm package` does: a .tgz whose
// entries start with the chart's name.
func packChart(t testing.TB, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	base := filepath.Base(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: base + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// recordingScope answers like a runtime's REST mapper that knows the
// built-in kinds, and records what it was asked.
type recordingScope struct {
	mu    sync.Mutex
	asked []schema.GroupKind
}

func (s *recordingScope) scope(gvk schema.GroupVersionKind) (bool, error) {
	s.mu.Lock()
	s.asked = append(s.asked, gvk.GroupKind())
	s.mu.Unlock()
	clusterScoped := map[string]bool{"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true}
	if gvk.Group != "" && !strings.Contains(gvk.Group, "k8s.io") && gvk.Group != "apps" && gvk.Group != "batch" {
		return false, &noKindMatch{gvk}
	}
	return !clusterScoped[gvk.Kind], nil
}

type noKindMatch struct{ gvk schema.GroupVersionKind }

func (e *noKindMatch) Error() string { return "no matches for kind " + e.gvk.String() }

// ids lists objects as "Kind namespace/name" (or "Kind name").
func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		name := o.GetName()
		if o.GetNamespace() != "" {
			name = o.GetNamespace() + "/" + name
		}
		out[i] = o.GetKind() + " " + name
	}
	return out
}

func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	require.Failf(t, "object not rendered", "%s %s in %v", kind, name, ids(objs))
	return nil
}
