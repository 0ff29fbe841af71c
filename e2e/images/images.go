package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Program is one image: the Go package of its binary and the image name.
type Program struct {
	// Name is the image's name and the binary's path in it (/Name).
	Name string
	// Module is the folder of the Go module in the repository.
	Module string
	// Package is the main package, relative to Module.
	Package string
}

// Programs are the images this repository ships.
var Programs = []Program{
	{Name: "kcp-operator", Module: "kcp-operator", Package: "./cmd/kcp-operator"},
	{Name: "skr-agent", Module: "skr-agent", Package: "./cmd/skr-agent"},
}

// The user the images run as: not root, and the same IDs as distroless'
// nonroot user, which the charts' securityContexts name.
const (
	UserID  = 65532
	GroupID = 65532
)

// Options say what to build the images from and for.
type Options struct {
	// Root is the repository.
	Root string
	// Arch is the target architecture (GOARCH); the OS is linux.
	Arch string
	// Version is the image's version label (the tag).
	Version string
	// Revision is the commit the binaries are built from.
	Revision string
	// Source is the repository's URL, labelled when known.
	Source string
	// Created is the image's creation time and every file's mtime: the
	// commit's time, so that a commit builds the same image bytes.
	Created time.Time
	// CABundle is the PEM file copied to /etc/ssl/certs/ca-certificates.crt;
	// the operator reaches module registries over TLS.
	CABundle string
	// WorkDir receives the compiled binaries.
	WorkDir string
}

// Build compiles p and assembles its image.
func Build(ctx context.Context, p Program, opts Options) (v1.Image, error) {
	binary := filepath.Join(opts.WorkDir, opts.Arch, p.Name)
	if err := compile(ctx, p, opts, binary); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(opts.CABundle)
	if err != nil {
		return nil, fmt.Errorf("reading the CA bundle for the image (Debian: apt-get install ca-certificates): %w", err)
	}
	layer, err := baseAndBinary(p.Name, binary, ca, opts.Created)
	if err != nil {
		return nil, fmt.Errorf("writing the layer of %s: %w", p.Name, err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, fmt.Errorf("assembling %s: %w", p.Name, err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return configure(img, p, opts)
}

// compile builds a static binary as the images need it: no cgo, paths of
// the build machine trimmed, the commit stamped into its build info.
func compile(ctx context.Context, p Program, opts Options, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-ldflags=-s -w", "-o", out, p.Package)
	cmd.Dir = filepath.Join(opts.Root, p.Module)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+opts.Arch)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s for linux/%s: %w\n%s", p.Package, opts.Arch, err, output)
	}
	return nil
}

func configure(img v1.Image, p Program, opts Options) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config of %s: %w", p.Name, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", opts.Arch
	cf.Created = v1.Time{Time: opts.Created}
	cf.Config.User = strconv.Itoa(UserID) + ":" + strconv.Itoa(GroupID)
	cf.Config.Entrypoint = []string{"/" + p.Name}
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = Labels(p, opts)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("configuring %s: %w", p.Name, err)
	}
	return img, nil
}

// Labels are the OCI annotations of p's image.
func Labels(p Program, opts Options) map[string]string {
	labels := map[string]string{
		"org.opencontainers.image.title":    p.Name,
		"org.opencontainers.image.revision": opts.Revision,
		"org.opencontainers.image.version":  opts.Version,
		"org.opencontainers.image.created":  opts.Created.UTC().Format(time.RFC3339),
	}
	if opts.Source != "" {
		labels["org.opencontainers.image.source"] = opts.Source
	}
	return labels
}

// DefaultOptions fills the options from the repository at root: its HEAD
// commit and that commit's time, the machine's architecture and CA bundle.
func DefaultOptions(ctx context.Context, root, workDir string) (Options, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		return Options{}, fmt.Errorf("reading the commit of %s: %w", root, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		return Options{}, fmt.Errorf("unexpected git log output %q", out)
	}
	seconds, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return Options{}, fmt.Errorf("reading the commit time %q: %w", fields[1], err)
	}
	// A clone without a remote has no URL to name; the label is left out.
	source, _ := exec.CommandContext(ctx, "git", "-C", root, "remote", "get-url", "origin").Output()
	return Options{
		Root: root, Arch: runtime.GOARCH, Version: "dev", Revision: fields[0], Source: strings.TrimSpace(string(source)),
		Created: time.Unix(seconds, 0).UTC(), CABundle: "/etc/ssl/certs/ca-certificates.crt", WorkDir: workDir,
	}, nil
}
