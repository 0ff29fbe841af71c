package pushpki_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/certs/certmanagertest"
	"github.com/lifecycle-manager/certs/pushpki"
)

// kcp is the control plane with the Kyma and cert-manager CRDs; runtime is
// a bare API server standing in for a runtime cluster. Starting one costs
// seconds, so every test shares them, each in its own namespaces.
var (
	kcp         *testenv.Env
	kcpWatch    client.WithWatch
	runtimeEnv  *testenv.Env
	stopServers []func() error
)

func TestMain(m *testing.M) {
	code := run(m)
	for _, stop := range stopServers {
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
	if kcpWatch, err = client.NewWithWatch(kcp.Config, client.Options{Scheme: scheme}); err != nil {
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
