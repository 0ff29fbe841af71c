package certmanagertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Version is the cert-manager release whose controllers and CRDs the tests
// run; hack/cert-manager/go.mod and certs/go.mod pin the same.
const Version = "v1.21.2"

// CRDPaths returns the cert-manager.io CRD files of the cert-manager module
// this module builds with (its deploy/crds folder in the module cache), for
// testenv.Options.CRDPaths. They must be those of Version, the controllers'.
func CRDPaths(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "github.com/cert-manager/cert-manager").Output()
	if err != nil {
		return nil, fmt.Errorf("finding the cert-manager module: %w", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if version != Version {
		return nil, fmt.Errorf("the cert-manager module is %s, the controllers are %s: CRDs and controllers must match", version, Version)
	}
	crds := filepath.Join(dir, "deploy", "crds")
	var paths []string
	for _, name := range []string{"certificates", "certificaterequests", "issuers", "clusterissuers"} {
		p := filepath.Join(crds, "cert-manager.io_"+name+".yaml")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("cert-manager CRD: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
