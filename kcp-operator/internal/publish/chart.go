package publish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// readChart returns the chart's .tgz: a folder is packed as `helm package`
// does (Chart.yaml checked, .helmignore honoured, charts/ included), with
// fixed file times so that the same chart always has the same digest; a
// .tgz is taken as it is.
func readChart(path string) (Layer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Layer{}, invalid("--chart %s: %w", path, unwrapPathError(err))
	}
	layer := Layer{Name: ResourceHelmChart, Type: TypeHelmChart, MediaType: render.MediaTypeHelmChart, Source: path}
	if !info.IsDir() {
		if layer.Data, err = readFile("--chart", path); err != nil {
			return Layer{}, err
		}
		if _, err := loader.LoadArchive(bytes.NewReader(layer.Data)); err != nil {
			return Layer{}, invalid("--chart %s: not a Helm chart archive: %w", path, err)
		}
		return layer, nil
	}
	if layer.Data, err = packChart(path); err != nil {
		return Layer{}, err
	}
	return layer, nil
}

func packChart(dir string) ([]byte, error) {
	chrt, err := loader.LoadDir(dir)
	if err != nil {
		return nil, invalid("--chart %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "modulectl-chart-")
	if err != nil {
		return nil, outputError("packing the chart: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a temporary copy
	file, err := chartutil.Save(chrt, tmp)
	if err != nil {
		return nil, invalid("--chart %s: packing: %w", dir, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, outputError("packing the chart: %w", err)
	}
	reproducible, err := withFixedTimes(data)
	if err != nil {
		return nil, invalid("--chart %s: packing: %w", dir, err)
	}
	return reproducible, nil
}

// withFixedTimes rewrites a .tgz with every file time at the epoch and a
// plain gzip header: Helm stamps archives with the time of packing.
func withFixedTimes(tgz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the packed chart: %w", err)
		}
		h.ModTime, h.AccessTime, h.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		h.Format = tar.FormatUnknown // let the writer pick the smallest format that fits
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("repacking %s: %w", h.Name, err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return nil, fmt.Errorf("repacking %s: %w", h.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
