package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"time"
)

//go:embed all:chart/skr-agent
var chartFS embed.FS

// chartArchive packs the embedded chart as a .tgz, as the render package
// takes charts: files in name order with fixed times, so its digest (the
// render cache key) only changes with its content.
func chartArchive() ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := fs.WalkDir(chartFS, "chart/skr-agent", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := chartFS.ReadFile(p)
		if err != nil {
			return err
		}
		name := path.Join("skr-agent", p[len("chart/skr-agent/"):])
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("packing the embedded skr-agent chart: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("packing the embedded skr-agent chart: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("packing the embedded skr-agent chart: %w", err)
	}
	return buf.Bytes(), nil
}
