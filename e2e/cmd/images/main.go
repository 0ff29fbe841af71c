// Command images builds the kcp-operator and skr-agent container images
// without a container daemon and writes them as an OCI image layout, a
// tarball for `kind load image-archive`, or pushes them to a registry.
// `make images` runs it; see the README.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/lifecycle-manager/e2e/harness"
	"github.com/lifecycle-manager/e2e/images"
)

type config struct {
	layout, archive, repository, tag, arch string
	push, insecure                         bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var c config
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	fs.StringVar(&c.layout, "layout", "bin/images", "Write the images into this OCI image layout folder (empty: none).")
	fs.StringVar(&c.archive, "archive", "", "Also write them into this tarball, for docker load or kind load image-archive.")
	fs.StringVar(&c.repository, "repository", "", "Name the images <repository>/<name>:<tag> (a registry host[:port] and path); empty: <name>:<tag>.")
	fs.BoolVar(&c.push, "push", false, "Push the images to --repository.")
	fs.BoolVar(&c.insecure, "insecure", false, "Reach --repository over plain HTTP.")
	fs.StringVar(&c.tag, "tag", "dev", "The images' tag and version label.")
	fs.StringVar(&c.arch, "arch", "", "Target architecture (GOARCH); default: this machine's.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.push && c.repository == "" {
		return errors.New("--push needs --repository")
	}
	root := harness.RepoRoot()
	work, err := os.MkdirTemp("", "images-")
	if err != nil {
		return fmt.Errorf("creating a work folder: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }() // a temporary folder: nothing to do if it stays
	opts, err := images.DefaultOptions(ctx, root, work)
	if err != nil {
		return err
	}
	opts.Version = c.tag
	if c.arch != "" {
		opts.Arch = c.arch
	}
	refs := map[string]v1.Image{}
	for _, p := range images.Programs {
		img, err := images.Build(ctx, p, opts)
		if err != nil {
			return err
		}
		refs[reference(c.repository, p.Name, c.tag)] = img
		digest, err := img.Digest()
		if err != nil {
			return fmt.Errorf("digest of %s: %w", p.Name, err)
		}
		fmt.Printf("%s %s (linux/%s, commit %s)\n", reference(c.repository, p.Name, c.tag), digest, opts.Arch, opts.Revision)
	}
	return write(ctx, c, root, refs)
}

func write(ctx context.Context, c config, root string, refs map[string]v1.Image) error {
	if c.layout != "" {
		dir := c.layout
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		if err := images.WriteLayout(dir, refs); err != nil {
			return err
		}
		fmt.Println("OCI layout:", dir)
	}
	if c.archive != "" {
		if err := images.WriteArchive(c.archive, refs); err != nil {
			return err
		}
		fmt.Println("archive:", c.archive)
	}
	if !c.push {
		return nil
	}
	for ref, img := range refs {
		if err := images.Push(ctx, ref, img, c.insecure); err != nil {
			return err
		}
		fmt.Println("pushed:", ref)
	}
	return nil
}

func reference(repository, name, tag string) string {
	if repository == "" {
		return name + ":" + tag
	}
	return strings.TrimSuffix(repository, "/") + "/" + name + ":" + tag
}
