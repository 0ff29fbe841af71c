package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

type result struct {
	code           int
	stdout, stderr string
}

// modulectl runs the CLI in-process with stdin and returns what it printed.
func modulectl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, streams{in: strings.NewReader(stdin), out: &out, err: &errOut})
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func publishArgs(registry string, extra ...string) []string {
	return append([]string{
		"publish", "--name", "sample", "--version", "0.1.0",
		"--manifest", testdata + "/raw", "--default-cr", testdata + "/default-cr.yaml",
		"--registry", registry + "/modules", "--insecure", "--username", "team", "--password-stdin", "--embed-descriptor",
	}, extra...)
}

func TestHelpShowsExamplesAndExitCodes(t *testing.T) {
	root := modulectl(t, "", "--help")
	assert.Equal(t, 0, root.code)
	assert.Contains(t, root.stdout, "Exit codes:")
	assert.Contains(t, root.stdout, "3  registry")
	for _, cmd := range []string{"publish", "verify"} {
		r := modulectl(t, "", cmd, "--help")
		assert.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, "Examples:")
		assert.Contains(t, r.stdout, "modulectl "+cmd+" --")
		assert.Contains(t, r.stdout, "--password-stdin")
	}
}

func TestUsageErrorsExitWithOne(t *testing.T) {
	tests := map[string]struct {
		args []string
		msg  string
	}{
		"unknown flag":           {[]string{"publish", "--module", "x"}, "unknown flag: --module"},
		"unknown command":        {[]string{"pubish"}, `unknown command "pubish"`},
		"missing name":           {[]string{"publish", "--version", "1.0.0", "--manifest", "x", "--registry", "r.io/m"}, "the module name is missing (--name)"},
		"positional argument":    {[]string{"publish", "manifests/"}, "publish takes no arguments"},
		"manifest and chart":     {[]string{"publish", "--name", "abc", "--version", "1.0.0", "--manifest", "a", "--chart", "b", "--registry", "r.io/m"}, "exclude each other"},
		"bad output format":      {[]string{"publish", "--output-format", "xml"}, `--output-format "xml"`},
		"password as a flag":     {[]string{"verify", "--template", "t.yaml", "--username", "u"}, "passwords are not taken as flags"},
		"password without user":  {[]string{"verify", "--template", "t.yaml", "--password-stdin"}, "--password-stdin needs --username"},
		"verify without a file":  {[]string{"verify"}, "the template is missing (--template FILE)"},
		"quiet and verbose both": {[]string{"verify", "-q", "-v"}, "exclude each other"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := modulectl(t, "", tc.args...)
			assert.Equal(t, publish.ExitUsage, r.code, r.stderr)
			assert.Contains(t, r.stderr, tc.msg)
			assert.Contains(t, r.stderr, "--help' for usage")
			assert.Empty(t, r.stdout)
		})
	}
}

// The flow of the module guide: publish to files, verify, publish the same
// version again, roll it out to one more channel.
func TestPublishToFilesThenVerify(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	tmplFile, mrmFile := filepath.Join(dir, "sample-0.1.0.yaml"), filepath.Join(dir, "sample.yaml")

	r := modulectl(t, "s3cret\n", publishArgs(reg, "--channel", "fast", "--output", tmplFile, "--release-meta", mrmFile)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stdout, "everything went to files")
	assert.Empty(t, r.stderr, "no progress when stderr is not a terminal")
	tmpl, err := publish.ReadTemplate(tmplFile)
	require.NoError(t, err)
	assert.Equal(t, "sample-0.1.0", tmpl.Name)
	mrm, err := publish.ReadReleaseMeta(mrmFile)
	require.NoError(t, err)
	require.Len(t, mrm.Spec.Channels, 1)

	v := modulectl(t, "s3cret", "verify", "--template", tmplFile, "--insecure", "--username", "team", "--password-stdin")
	require.Equal(t, 0, v.code, v.stderr)
	objs, err := render.ParseManifests([]byte(v.stdout))
	require.NoError(t, err)
	require.Len(t, objs, 6, "5 resources and the default CR")
	assert.Equal(t, "CustomResourceDefinition", objs[0].GetKind())
	assert.Equal(t, "Sample", objs[5].GetKind())
	assert.Equal(t, "kyma-system", objs[5].GetNamespace())
	assert.Contains(t, v.stdout, "# The default CR")

	again := modulectl(t, "s3cret", publishArgs(reg, "--channel", "regular", "--output", tmplFile, "--release-meta", mrmFile, "--verbose")...)
	require.Equal(t, 0, again.code, again.stderr)
	assert.Contains(t, again.stderr, "unchanged")
	assert.Contains(t, again.stderr, "pushed     raw-manifest")
	mrm, err = publish.ReadReleaseMeta(mrmFile)
	require.NoError(t, err)
	assert.Len(t, mrm.Spec.Channels, 2, "the new channel is merged into the file")
}

func TestJSONOutput(t *testing.T) {
	reg := startRegistry(t)
	r := modulectl(t, "s3cret", publishArgs(reg, "--channel", "regular", "--output-format", "json", "--verbose")...)
	require.Equal(t, 0, r.code, r.stderr)
	var published struct {
		Result      publish.Result `json:"result"`
		Template    map[string]any `json:"template"`
		ReleaseMeta map[string]any `json:"releaseMeta"`
		Files       []string       `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &published), r.stdout)
	require.Len(t, published.Result.Layers, 1)
	assert.Contains(t, r.stderr, published.Result.Layers[0].Digest, "progress still goes to stderr")
	assert.Equal(t, "ModuleTemplate", published.Template["kind"])
	assert.Equal(t, "ModuleReleaseMeta", published.ReleaseMeta["kind"])
	assert.Empty(t, published.Files)

	tmplFile := filepath.Join(t.TempDir(), "t.yaml")
	data, err := yaml.Marshal(published.Template)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tmplFile, data, 0o600))
	v := modulectl(t, "s3cret", "verify", "--template", tmplFile, "--insecure", "--username", "team", "--password-stdin", "--output-format", "json", "-q")
	require.Equal(t, 0, v.code, v.stderr)
	assert.Empty(t, v.stderr)
	var verified struct {
		Result    publish.Verified `json:"result"`
		Objects   []map[string]any `json:"objects"`
		DefaultCR map[string]any   `json:"defaultCR"`
	}
	require.NoError(t, json.Unmarshal([]byte(v.stdout), &verified))
	assert.Len(t, verified.Objects, 5)
	assert.Equal(t, "Sample", verified.DefaultCR["kind"])
	assert.Equal(t, published.Result.Layers[0].Digest, verified.Result.Layers[0].Digest)

	bad := modulectl(t, "s3cret", append(publishArgs(reg, "--output-format", "json"), "--version", "1")...)
	assert.Equal(t, publish.ExitInvalidInput, bad.code)
	var failure struct {
		Error    string `json:"error"`
		Kind     string `json:"kind"`
		ExitCode int    `json:"exitCode"`
	}
	require.NoError(t, json.Unmarshal([]byte(bad.stdout), &failure))
	assert.Equal(t, "invalid-input", failure.Kind)
	assert.Equal(t, publish.ExitInvalidInput, failure.ExitCode)
	assert.Contains(t, failure.Error, `version "1" is not a semantic version`)
}

func TestExitCodesOfFailures(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	tmplFile := filepath.Join(dir, "t.yaml")
	require.Equal(t, 0, modulectl(t, "s3cret", publishArgs(reg, "--output", tmplFile)...).code)
	edited, err := os.ReadFile(tmplFile)
	require.NoError(t, err)
	editedFile := filepath.Join(dir, "edited.yaml")
	require.NoError(t, os.WriteFile(editedFile, bytes.Replace(edited, []byte("provider: kyma-project.io"), []byte("provider: someone-else"), 1), 0o600))
	require.NotEqual(t, edited, mustRead(t, editedFile))
	noCRD := filepath.Join(dir, "deployment.yaml")
	require.NoError(t, os.WriteFile(noCRD, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"), 0o600))

	tests := map[string]struct {
		stdin string
		args  []string
		code  int
		msg   string
	}{
		"default CR without its CRD": {"s3cret", publishArgs(reg, "--manifest", noCRD), publish.ExitInvalidInput, "is not defined by a CRD"},
		"bad semver":                 {"s3cret", publishArgs(reg, "--version", "1.0"), publish.ExitInvalidInput, "not a semantic version"},
		"wrong password":             {"guess", publishArgs(reg), publish.ExitRegistry, "registry denied access"},
		"unreachable registry":       {"s3cret", publishArgs(closedAddress(t)), publish.ExitRegistry, "registry unreachable"},
		"edited template":            {"s3cret", []string{"verify", "--template", editedFile, "--username", "team", "--password-stdin"}, publish.ExitVerification, "another descriptor"},
		"output folder missing":      {"s3cret", publishArgs(reg, "--version", "0.9.0", "--output", filepath.Join(dir, "no", "t.yaml")), publish.ExitOutput, "cannot write " + filepath.Join(dir, "no", "t.yaml") + ": no such file or directory"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := modulectl(t, tc.stdin, tc.args...)
			t.Log(r.stderr)
			assert.Equal(t, tc.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, "modulectl: ")
			assert.Contains(t, r.stderr, tc.msg)
		})
	}
}

// An output that cannot be written is found before anything is pushed.
func TestUnwritableOutputPushesNothing(t *testing.T) {
	reg := startRegistry(t)
	dir := t.TempDir()
	r := modulectl(t, "s3cret", publishArgs(reg, "--release-meta", filepath.Join(dir, "missing", "mrm.yaml"), "--channel", "fast")...)
	require.Equal(t, publish.ExitOutput, r.code, r.stderr)
	r = modulectl(t, "s3cret", publishArgs(reg, "--output-format", "json")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, `"unchanged"`, "the version was not published by the failed run")

	same := filepath.Join(dir, "both.yaml")
	r = modulectl(t, "", publishArgs(reg, "--output", same, "--release-meta", same, "--channel", "fast")...)
	assert.Equal(t, publish.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "--output and --release-meta name the same file")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

func TestProgressOnATerminal(t *testing.T) {
	reg := startRegistry(t)
	var out, errOut bytes.Buffer
	code := run(t.Context(), publishArgs(reg), streams{in: strings.NewReader("s3cret"), out: &out, err: &errOut, errIsTerminal: true})
	require.Equal(t, 0, code, errOut.String())
	tmpl, err := render.ParseManifests(out.Bytes())
	require.NoError(t, err)
	require.Len(t, tmpl, 1, "without channels, only the ModuleTemplate")
	progress := errOut.String()
	t.Log(progress)
	for _, want := range []string{"checked    sample 0.1.0: 5 objects", "pushing    1 layer to", "pushed     raw-manifest", "application/x-tar", "KiB", "sha256:", "published  "} {
		assert.Contains(t, progress, want)
	}

	errOut.Reset()
	code = run(t.Context(), append(publishArgs(reg), "--quiet"), streams{in: strings.NewReader("s3cret"), out: &out, err: &errOut, errIsTerminal: true})
	require.Equal(t, 0, code)
	assert.Empty(t, errOut.String(), "--quiet")
}

func TestWarningsWithoutATerminal(t *testing.T) {
	dir := t.TempDir()
	manifests := filepath.Join(dir, "m.yaml")
	require.NoError(t, os.WriteFile(manifests, []byte(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b}
`), 0o600))
	r := modulectl(t, "", "publish", "--name", "sample", "--version", "1.0.0", "--manifest", manifests, "--registry", "registry.example.com/modules", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "warning: kind VirtualService.networking.istio.io is defined neither by Kubernetes nor by a CRD of the module")
	assert.Contains(t, r.stderr, "warning: no manager: the module has 2 Deployments (a, b); name one with --manager")

	r = modulectl(t, "", "publish", "--name", "sample", "--version", "1.0.0", "--manifest", manifests, "--registry", "registry.example.com/modules", "--dry-run", "--manager", "b")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "no manager")
	assert.Contains(t, r.stdout, "name: b")
}
