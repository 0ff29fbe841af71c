package pushpki_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/certs/certmanagertest"
	"github.com/lifecycle-manager/certs/pushpki"
)

// kcp is the control plane with the Kyma and cert-manager CRDs, where the
// real cert-manager controllers run; runtime is a bare API server standing
// in for a runtime cluster. Starting them costs seconds, so every test
// shares them, each in its own namespaces.
var (
	kcp         *testenv.Env
	certManager *certmanagertest.Controllers
	runtimeEnv  *testenv.Env
	stopServers []func() error
)

// certManagerStart bounds building (the first time, a few minutes) and
// starting the cert-manager controllers.
const certManagerStart = 15 * time.Minute

func TestMain(m *testing.M) {
	code := run(m)
	for _, stop := range slices.Backward(stopServers) {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

func run(m *testing.M) int {
	// controller-runtime complains on stderr when its global logger was never set.
	ctrllog.SetLogger(logr.Discard())
	crds, err := certmanagertest.CRDPaths(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scheme := testenv.NewScheme()
	if err := pushpki.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if kcp, err = testenv.Start(testenv.Options{CRDPaths: crds, Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stopServers = append(stopServers, kcp.Stop)
	if err := startCertManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if runtimeEnv, err = testenv.Start(testenv.Options{WithoutAPICRDs: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stopServers = append(stopServers, runtimeEnv.Stop)
	return m.Run()
}

// startCertManager runs cert-manager's controllers against kcp for every
// test namespace; the backend's tests talk to them as to a cluster's.
func startCertManager() error {
	dir, err := os.MkdirTemp("", "pushpki-cert-manager-")
	if err != nil {
		return fmt.Errorf("cert-manager folder: %w", err)
	}
	kubeconfig, err := kcp.Kubeconfig("cert-manager", "system:masters")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), certManagerStart)
	defer cancel()
	if certManager, err = certmanagertest.Start(ctx, certmanagertest.Options{Kubeconfig: kubeconfig, Dir: dir}); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("cert-manager mode needs the real controllers: %w", err)
	}
	stopServers = append(stopServers, func() error {
		err := certManager.Stop()
		if err == nil {
			_ = os.RemoveAll(dir)
		}
		return err
	})
	return nil
}
