package pkitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Files are the paths of a set of TLS files.
type Files struct {
	Cert, Key, CA string
}

// WriteFiles writes tls.crt, tls.key and ca.crt into dir.
func WriteFiles(tb testing.TB, dir string, cert, key, ca []byte) Files {
	tb.Helper()
	f := Files{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")}
	f.Write(tb, cert, key, ca)
	return f
}

// Write replaces the files' contents, the key first; nil leaves a file as
// it is.
func (f Files) Write(tb testing.TB, cert, key, ca []byte) {
	tb.Helper()
	for _, w := range []struct {
		path string
		data []byte
	}{{f.Key, key}, {f.Cert, cert}, {f.CA, ca}} {
		if w.data != nil {
			WriteFile(tb, w.path, w.data)
		}
	}
}

// WriteFile replaces a file the way a Secret volume does: write aside, rename.
func WriteFile(tb testing.TB, path string, data []byte) {
	tb.Helper()
	tmp := path + ".tmp"
	require.NoError(tb, os.WriteFile(tmp, data, 0o600))
	require.NoError(tb, os.Rename(tmp, path))
}
