package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// file is one entry of the image's only layer.
type file struct {
	name string
	mode int64
	dir  bool
	data []byte
}

// baseAndBinary writes the image's filesystem: what a static Go binary
// needs to run as a non-root user and reach TLS servers, and the binary.
// Entries are root-owned and carry mtime, so the layer's bytes depend only
// on its inputs.
func baseAndBinary(name, binary string, caBundle []byte, mtime time.Time) (v1.Layer, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("reading the binary: %w", err)
	}
	files := []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caBundle},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: name, mode: 0o755, data: bin},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := writeEntry(tw, f, mtime); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

func writeEntry(tw *tar.Writer, f file, mtime time.Time) error {
	h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: mtime, Format: tar.FormatPAX}
	if f.name == "home/nonroot/" {
		h.Uid, h.Gid = UserID, GroupID
	}
	if f.dir {
		h.Typeflag = tar.TypeDir
	} else {
		h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	if _, err := tw.Write(f.data); err != nil {
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	return nil
}
