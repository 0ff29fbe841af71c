package harness

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Binaries are the built programs the harness runs.
type Binaries struct {
	Operator, Agent, Modulectl, SampleOperator string
}

// RepoRoot is the repository, found from this file.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build compiles the programs into dir with go build, as users build them.
func Build(ctx context.Context, dir string) (Binaries, error) {
	root := RepoRoot()
	b := Binaries{
		Operator:       filepath.Join(dir, "kcp-operator"),
		Agent:          filepath.Join(dir, "skr-agent"),
		Modulectl:      filepath.Join(dir, "modulectl"),
		SampleOperator: filepath.Join(dir, "sample-operator"),
	}
	for _, target := range []struct{ module, pkg, out string }{
		{"kcp-operator", "./cmd/kcp-operator", b.Operator},
		{"kcp-operator", "./cmd/modulectl", b.Modulectl},
		{"skr-agent", "./cmd/skr-agent", b.Agent},
		{"e2e", "./cmd/sample-operator", b.SampleOperator},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", target.out, target.pkg)
		cmd.Dir = filepath.Join(root, target.module)
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("building %s: %w\n%s", target.pkg, err, out)
		}
	}
	return b, nil
}
