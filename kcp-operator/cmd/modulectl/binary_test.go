package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

// The binary as scripts and the e2e harness run it: built, exec'd, judged
// by exit code and stdout.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "modulectl")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run(), "building modulectl")

	exe := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), out.String(), errOut.String()
		}
		require.NoError(t, err)
		return 0, out.String(), errOut.String()
	}

	reg := startRegistry(t)
	args := []string{
		"publish", "--name", "sample", "--version", "0.3.0", "--chart", testdata + "/chart/sample",
		"--config", testdata + "/chart-config.yaml", "--default-cr", testdata + "/default-cr.yaml",
		"--registry", reg + "/modules", "--insecure", "--username", "team", "--password-stdin", "--channel", "regular",
	}
	code, stdout, stderr := exe("s3cret\n", args...)
	require.Equal(t, 0, code, stderr)
	docs, err := render.ParseManifests([]byte(stdout))
	require.NoError(t, err)
	require.Len(t, docs, 2)
	assert.Equal(t, "ModuleTemplate", docs[0].GetKind())
	assert.Equal(t, "ModuleReleaseMeta", docs[1].GetKind())
	descriptor, _, _ := unstructured.NestedMap(docs[0].Object, "spec", "descriptor")
	assert.Empty(t, descriptor, "without --embed-descriptor the template has descriptor: {}, as the public modulectl writes it")

	tmplFile := filepath.Join(t.TempDir(), "sample.yaml")
	require.NoError(t, os.WriteFile(tmplFile, []byte(stdout), 0o600))
	// publish wrote descriptor: {}, as the public modulectl does: verify
	// reads it where the operator will, in the registry.
	code, stdout, stderr = exe("s3cret", "verify", "--template", tmplFile, "--registry", reg+"/modules", "--insecure", "--username", "team", "--password-stdin", "--verbose")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "digest verified")
	objs, err := render.ParseManifests([]byte(stdout))
	require.NoError(t, err)
	assert.Len(t, objs, 5, "CRD, ServiceAccount, ConfigMap, Deployment, default CR")

	code, _, stderr = exe("s3cret\n", append(args, "--version", "3")...)
	assert.Equal(t, publish.ExitInvalidInput, code)
	assert.Contains(t, stderr, `modulectl: version "3" is not a semantic version`)

	code, _, stderr = exe("", "publish", "--bogus")
	assert.Equal(t, publish.ExitUsage, code)
	assert.Contains(t, stderr, "unknown flag: --bogus")
}
