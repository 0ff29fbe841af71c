package certmanagertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CRDPaths returns the cert-manager.io CRD files of the cert-manager module
// this module builds with (its deploy/crds folder in the module cache), for
// testenv.Options.CRDPaths.
func CRDPaths(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/cert-manager/cert-manager").Output()
	if err != nil {
		return nil, fmt.Errorf("finding the cert-manager module: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "deploy", "crds")
	var paths []string
	for _, name := range []string{"certificates", "certificaterequests", "issuers", "clusterissuers"} {
		p := filepath.Join(dir, "cert-manager.io_"+name+".yaml")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("cert-manager CRD: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
