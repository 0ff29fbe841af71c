package promtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries returns the folder holding prometheus and promtool, which
// hack/prometheus.sh (of the repository at root) provides: installed from
// Debian's packages when missing, then cached. The error says why not.
func Binaries(ctx context.Context, root string) (string, error) {
	script := filepath.Join(root, "hack", "prometheus.sh")
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("obtaining prometheus and promtool with %s: %w\n%s", script, err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	for _, name := range []string{"prometheus", "promtool"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s printed %q, which has no %s: %w", script, dir, name, err)
		}
	}
	return dir, nil
}
