package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lifecycle-manager/e2e/harness"
)

// Channel is the release channel of every Kyma of the run.
const Channel = "regular"

// moduleWords name the modules: module names are words of letters.
var moduleWords = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
	"juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
	"uniform", "victor", "whiskey", "xray", "yankee", "zulu"}

// MaxModules is the number of module names there are.
var MaxModules = len(moduleWords)

// ModuleName is the name of module m (1-based).
func ModuleName(m int) string { return "scale-" + moduleWords[m-1] }

// moduleManifest is a module as small as a real one's footprint in the
// API server: a Deployment (which the fleet's kubelet makes available) and
// a ConfigMap, both namespaced so that runtimes can share an API server.
const moduleManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s-operator
  labels: {app.kubernetes.io/name: %[1]s-operator}
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: %[1]s-operator}
  template:
    metadata:
      labels: {app.kubernetes.io/name: %[1]s-operator}
    spec:
      containers:
        - name: manager
          image: example.invalid/%[1]s-operator:%[2]s
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-settings
data:
  version: "%[2]s"
`

// PublishModules publishes version 1.0.0 of every module to Channel.
func (f *Fleet) PublishModules(ctx context.Context) error {
	for m := 1; m <= f.opts.Modules; m++ {
		if err := f.Publish(ctx, ModuleName(m), "1.0.0"); err != nil {
			return err
		}
	}
	return nil
}

// Publish publishes a version of a module to Channel with modulectl, as a
// module team would, and applies the template and release meta it writes.
func (f *Fleet) Publish(ctx context.Context, module, version string) error {
	dir := filepath.Join(f.opts.RunDir, "modules", module, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, fmt.Appendf(nil, moduleManifest, module, version), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", manifest, err)
	}
	template := filepath.Join(dir, "template.yaml")
	meta := filepath.Join(f.opts.RunDir, "modules", module, "release-meta.yaml")
	cmd := exec.CommandContext(ctx, f.Bin.Modulectl, "publish", "--name", module, "--version", version,
		"--manifest", manifest, "--registry", f.Registry, "--insecure", "--channel", Channel,
		"--namespace", Namespace, "--output", template, "--release-meta", meta, "--quiet")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("modulectl publish %s %s: %w\n%s", module, version, err, out)
	}
	for _, file := range []string{template, meta} {
		if err := f.applyFile(ctx, file); err != nil {
			return err
		}
	}
	return nil
}

func (f *Fleet) applyFile(ctx context.Context, path string) error {
	return harness.ApplyFile(ctx, f.kcp, path, Namespace, "scale-harness")
}
