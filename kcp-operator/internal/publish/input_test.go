package publish_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/publish"
)

// write creates a file under dir and returns its path.
func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o750))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

const deploymentOnly = `apiVersion: apps/v1
kind: Deployment
metadata: {name: lonely}
spec: {}
`

// Every problem is found before the registry is contacted, and the error
// names the flag, the file and, where there is one, the object.
func TestBadInputIsRejectedBeforeAnythingIsPushed(t *testing.T) {
	dir := t.TempDir()
	badYAML := write(t, dir, "bad/20-broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: [unclosed\n")
	write(t, dir, "bad/10-fine.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n")
	badYAML = filepath.Dir(badYAML)
	tests := map[string]struct {
		change func(r *publish.Request)
		kind   error
		msg    []string
	}{
		"default CR of a kind no CRD defines": {
			change: func(r *publish.Request) {
				r.DefaultCR = write(t, dir, "other-cr.yaml", "apiVersion: modules.example.io/v1alpha1\nkind: Other\nmetadata: {name: default}\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"--default-cr", "other-cr.yaml", "(Other default)", "kind Other.modules.example.io is not defined by a CRD", "Sample.modules.example.io"},
		},
		"default CR but the module has no CRDs": {
			change: func(r *publish.Request) { r.Manifests = write(t, dir, "deployment.yaml", deploymentOnly) },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"default-cr.yaml (Sample default)", "the module has no CRDs"},
		},
		"default CR of a version the CRD does not serve": {
			change: func(r *publish.Request) {
				r.DefaultCR = write(t, dir, "beta-cr.yaml", "apiVersion: modules.example.io/v1beta1\nkind: Sample\nmetadata: {name: default}\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"version v1beta1 of Sample.modules.example.io is not served by CRD samples.modules.example.io (served: v1alpha1)"},
		},
		"default CR file with two objects": {
			change: func(r *publish.Request) {
				r.DefaultCR = write(t, dir, "two.yaml", "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"two.yaml: want exactly one object, found 2"},
		},
		"invalid YAML in a folder": {
			change: func(r *publish.Request) { r.Manifests = badYAML; r.DefaultCR = "" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"--manifest " + badYAML + ": 20-broken.yaml, document 2", "YAML"},
		},
		"object without a name": {
			change: func(r *publish.Request) {
				r.Manifests = write(t, dir, "noname.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"noname.yaml: document 1", "metadata.name is missing"},
		},
		"the same object twice": {
			change: func(r *publish.Request) {
				r.Manifests = write(t, dir, "twice.yaml", deploymentOnly+"---\n"+deploymentOnly)
				r.DefaultCR = ""
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"twice.yaml: document 2 (Deployment kyma-system/lonely)", "already defined in document 1"},
		},
		"manifests without objects": {
			change: func(r *publish.Request) {
				r.Manifests = write(t, dir, "empty.yaml", "---\n# nothing yet\n")
				r.DefaultCR = ""
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"empty.yaml: the module renders no objects"},
		},
		"missing manifest file": {
			change: func(r *publish.Request) { r.Manifests = filepath.Join(dir, "nope.yaml") },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"--manifest " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"},
		},
		"folder without manifests": {
			change: func(r *publish.Request) { r.Manifests = filepath.Dir(write(t, dir, "empty/README.md", "hi")) },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"the folder has no .yaml, .yml or .json files"},
		},
		"version that is not semver": {
			change: func(r *publish.Request) { r.Version = "1.2" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{`version "1.2" is not a semantic version`},
		},
		"version with a v": {
			change: func(r *publish.Request) { r.Version = "v1.2.3" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"write 1.2.3, without the v"},
		},
		"module name the CRDs refuse": {
			change: func(r *publish.Request) { r.Name = "Sample_2" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{`module name "Sample_2"`},
		},
		"channel name the CRDs refuse": {
			change: func(r *publish.Request) { r.Channels = []string{"Fast"} },
			kind:   publish.ErrInvalidInput,
			msg:    []string{`channel "Fast"`},
		},
		"registry that is not a repository name": {
			change: func(r *publish.Request) { r.Registry = "registry.example.com/UPPER case" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{`registry "registry.example.com/UPPER case"`},
		},
		"manager that is not in the module": {
			change: func(r *publish.Request) { r.Manager = "ghost" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"--manager ghost: the module has no Deployment or StatefulSet of that name"},
		},
		"chart that does not render with its values": {
			change: func(r *publish.Request) {
				r.Manifests, r.Chart = "", "testdata/chart/sample"
				r.Config = write(t, dir, "empty-greeting.yaml", "greeting: \"\"\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"--chart testdata/chart/sample", "greeting is required"},
		},
		"config that is not a map": {
			change: func(r *publish.Request) {
				r.Manifests, r.Chart = "", "testdata/chart/sample"
				r.Config = write(t, dir, "list.yaml", "- a\n- b\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"--config " + filepath.Join(dir, "list.yaml") + ": not a YAML map of Helm values"},
		},
		"folder that is not a chart": {
			change: func(r *publish.Request) { r.Manifests, r.Chart = "", "testdata/raw" },
			kind:   publish.ErrInvalidInput,
			msg:    []string{"--chart testdata/raw", "Chart.yaml"},
		},
		"release meta of another module": {
			change: func(r *publish.Request) {
				r.ReleaseMeta = write(t, dir, "other-mrm.yaml", "apiVersion: operator.kyma-project.io/v1beta2\nkind: ModuleReleaseMeta\n"+
					"metadata: {name: keda, namespace: kcp-system}\nspec: {moduleName: keda, channels: [{channel: regular, version: 1.0.0}]}\n")
			},
			kind: publish.ErrInvalidInput,
			msg:  []string{"other-mrm.yaml: it is the ModuleReleaseMeta of module \"keda\", not \"sample\""},
		},
		"manifests and chart":   {change: func(r *publish.Request) { r.Chart = "testdata/chart/sample" }, kind: publish.ErrUsage, msg: []string{"--manifest and --chart exclude each other"}},
		"config without chart":  {change: func(r *publish.Request) { r.Config = "testdata/chart-config.yaml" }, kind: publish.ErrUsage, msg: []string{"--config holds Helm values"}},
		"no name":               {change: func(r *publish.Request) { r.Name = "" }, kind: publish.ErrUsage, msg: []string{"--name"}},
		"no registry":           {change: func(r *publish.Request) { r.Registry = "" }, kind: publish.ErrUsage, msg: []string{"--registry"}},
		"mandatory and channel": {change: func(r *publish.Request) { r.Mandatory = true }, kind: publish.ErrUsage, msg: []string{"--mandatory and --channel exclude each other"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			reg := startRegistry(t)
			req := rawRequest(reg)
			tc.change(&req)
			_, err := publish.Publish(t.Context(), req, publish.Access{})
			require.Error(t, err)
			t.Log(err)
			require.ErrorIs(t, err, tc.kind)
			for _, m := range tc.msg {
				assert.Contains(t, err.Error(), m)
			}
			assert.Zero(t, reg.count(), "the registry is not contacted for bad input")
		})
	}
}

func TestExitCodes(t *testing.T) {
	reg := startRegistry(t)
	bad := rawRequest(reg)
	bad.Version = "one"
	_, invalid := publish.Publish(t.Context(), bad, publish.Access{})
	unreachable := rawRequest(reg)
	unreachable.Registry = closedAddress(t) + "/modules"
	_, registryErr := publish.Publish(t.Context(), unreachable, publish.Access{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for err, want := range map[error]int{
		nil:         publish.ExitOK,
		invalid:     publish.ExitInvalidInput,
		registryErr: publish.ExitRegistry,
		&publish.Error{Kind: publish.ErrUsage, Err: assert.AnError}:        publish.ExitUsage,
		&publish.Error{Kind: publish.ErrVerification, Err: assert.AnError}: publish.ExitVerification,
		&publish.Error{Kind: publish.ErrOutput, Err: assert.AnError}:       publish.ExitOutput,
		assert.AnError:                       publish.ExitUsage,
		fmt.Errorf("pushing: %w", ctx.Err()): publish.ExitInterrupted,
	} {
		assert.Equal(t, want, publish.ExitCode(err), "%v", err)
	}
}
