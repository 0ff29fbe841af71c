package chartstest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifecycle-manager/api/testenv"
)

// certManagerModule is the cert-manager release whose CRDs the chart's
// cert-manager objects are checked against (the one certs/ builds with).
const certManagerModule = "github.com/cert-manager/cert-manager@v1.21.2"

// env is one kube-apiserver for every test of the package, with the
// Lifecycle Manager CRDs, cert-manager's, and the ServiceMonitor and
// PrometheusRule stand-ins.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	crds, err := certManagerCRDs(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	crds = append(crds, filepath.Join("testdata", "servicemonitor-standin-crd.yaml"),
		filepath.Join("testdata", "prometheusrule-standin-crd.yaml"))
	if env, err = testenv.Start(testenv.Options{CRDPaths: crds}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return m.Run()
}

// certManagerCRDs returns the cert-manager.io CRD files of certManagerModule
// from the module cache (go mod download fetches it when missing).
func certManagerCRDs(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", certManagerModule).Output()
	if err != nil {
		return nil, fmt.Errorf("downloading %s for its CRDs: %w", certManagerModule, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, fmt.Errorf("reading go mod download's answer for %s: %w", certManagerModule, err)
	}
	if mod.Error != "" {
		return nil, fmt.Errorf("downloading %s: %s", certManagerModule, mod.Error)
	}
	var paths []string
	for _, name := range []string{"certificates", "certificaterequests", "issuers", "clusterissuers"} {
		p := filepath.Join(mod.Dir, "deploy", "crds", "cert-manager.io_"+name+".yaml")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("cert-manager CRD: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
