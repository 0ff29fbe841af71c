// Command imagetool writes a one-layer image holding a static binary as a
// docker-archive tarball that `ctr images import` accepts:
//
//	imagetool -bin ./pause -path /pause -tag docker.io/local/pause:1 -out pause.tar
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	bin := flag.String("bin", "", "static binary to put into the image")
	path := flag.String("path", "/app", "path of the binary in the image (the entrypoint)")
	tag := flag.String("tag", "", "image reference, e.g. docker.io/local/pause:1")
	out := flag.String("out", "", "output tarball")
	user := flag.String("user", "", "image user (empty: root)")
	flag.Parse()
	if err := run(*bin, *path, *tag, *out, *user, flag.Args()); err != nil {
		log.Fatal(err)
	}
}

func run(bin, path, tag, out, user string, args []string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"etc/", "tmp/", "dev/", "proc/", "sys/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	files := map[string][]byte{
		"etc/passwd":                  []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n"),
		"etc/group":                   []byte("root:x:0:\nnonroot:x:65532:\n"),
		strings.TrimPrefix(path, "/"): data,
	}
	for n, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config = v1.Config{Entrypoint: append([]string{path}, args...), User: user}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
