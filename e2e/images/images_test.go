package images_test

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/harness"
	"github.com/lifecycle-manager/e2e/images"
)

// A flag each program's --help lists: the usage really is the program's.
var helpMentions = map[string]string{
	"kcp-operator": "--listener-bind-address",
	"skr-agent":    "-kcp-addr string",
}

// TestImagesRunAsTheirUserAndAreThisCommit builds both images as `make
// images` does, reads them back from the OCI layout, unpacks each and runs
// its entrypoint with --help as the image's user; the binary's build info
// names the commit the labels name, and that is the repository's HEAD.
func TestImagesRunAsTheirUserAndAreThisCommit(t *testing.T) {
	opts, err := images.DefaultOptions(t.Context(), harness.RepoRoot(), t.TempDir())
	require.NoError(t, err)
	built := map[string]v1.Image{}
	for _, p := range images.Programs {
		img, err := images.Build(t.Context(), p, opts)
		require.NoError(t, err)
		built[p.Name+":test"] = img
	}
	dir := t.TempDir()
	require.NoError(t, images.WriteLayout(dir, built))
	index, err := layout.ImageIndexFromPath(dir)
	require.NoError(t, err)
	manifest, err := index.IndexManifest()
	require.NoError(t, err)
	require.Len(t, manifest.Manifests, len(images.Programs))
	for _, desc := range manifest.Manifests {
		ref := desc.Annotations["org.opencontainers.image.ref.name"]
		t.Run(ref, func(t *testing.T) {
			img, err := index.Image(desc.Digest)
			require.NoError(t, err)
			checkImage(t, img, strings.TrimSuffix(ref, ":test"), opts.Revision)
		})
	}
}

func checkImage(t *testing.T, img v1.Image, program, revision string) {
	t.Helper()
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cf.Config.User, "not root")
	assert.Equal(t, revision, cf.Config.Labels["org.opencontainers.image.revision"])
	assert.Equal(t, program, cf.Config.Labels["org.opencontainers.image.title"])
	require.Len(t, cf.Config.Entrypoint, 1)

	root := unpack(t, img)
	entrypoint := filepath.Join(root, cf.Config.Entrypoint[0])
	info, err := buildinfo.ReadFile(entrypoint)
	require.NoError(t, err)
	assert.Equal(t, revision, setting(info, "vcs.revision"), "the binary is built from this commit")
	assert.Equal(t, "0", setting(info, "CGO_ENABLED"), "a static binary")

	out, err := runAs(t, cf.Config.User, entrypoint, "--help")
	require.NoError(t, err, "%s --help as %s:\n%s", program, cf.Config.User, out)
	assert.Contains(t, out, helpMentions[program])
	_, err = os.Stat(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	assert.NoError(t, err, "a CA bundle for TLS to registries")
}

// unpack writes img's filesystem into a folder the image's user can
// traverse, keeping file modes.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, os.Mkdir(root, 0o755))
	// t.TempDir makes a test folder and a numbered one inside, both 0700.
	for dir := filepath.Dir(root); dir != filepath.Clean(os.TempDir()); dir = filepath.Dir(dir) {
		require.NoError(t, os.Chmod(dir, 0o755))
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return root
		}
		require.NoError(t, err)
		target := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(target, 0o755))
			require.NoError(t, os.Chmod(target, h.FileInfo().Mode().Perm()))
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, h.FileInfo().Mode().Perm())
			require.NoError(t, err)
			_, err = io.Copy(f, tr)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}
	}
}

// runAs runs the program as the image's user "uid:gid". Switching users
// needs root, which CI has; elsewhere the program runs as the caller, and
// the entrypoint's mode still has to let any other user run it (the
// image's user owns nothing in the image).
func runAs(t *testing.T, user, program string, args ...string) (string, error) {
	t.Helper()
	info, err := os.Stat(program)
	require.NoError(t, err)
	require.NotZero(t, info.Mode().Perm()&0o001, "%s is executable by users that do not own it: %s", program, info.Mode())
	uid, gid, ok := strings.Cut(user, ":")
	require.True(t, ok, "user %q is uid:gid", user)
	u, err := strconv.ParseUint(uid, 10, 32)
	require.NoError(t, err)
	g, err := strconv.ParseUint(gid, 10, 32)
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), program, args...)
	cmd.Dir, cmd.Env = "/", []string{"PATH=/"}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u), Gid: uint32(g)}}
	} else {
		t.Logf("not root: running %s as uid %d instead of %s", program, os.Geteuid(), user)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

func setting(info *buildinfo.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// TestImagesPushToARegistry pushes an image to a registry served over
// HTTP in this process and reads the same digest back.
func TestImagesPushToARegistry(t *testing.T) {
	opts, err := images.DefaultOptions(t.Context(), harness.RepoRoot(), t.TempDir())
	require.NoError(t, err)
	img, err := images.Build(t.Context(), images.Programs[1], opts)
	require.NoError(t, err)
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/lifecycle-manager/skr-agent:test"
	require.NoError(t, images.Push(t.Context(), ref, img, true))

	tag, err := name.NewTag(ref, name.Insecure)
	require.NoError(t, err)
	pulled, err := remote.Image(tag, remote.WithContext(t.Context()))
	require.NoError(t, err)
	want, err := img.Digest()
	require.NoError(t, err)
	got, err := pulled.Digest()
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
