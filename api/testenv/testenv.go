package testenv

import (
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/v1beta2"
)

// Options configure an API server for a test.
type Options struct {
	// CRDs are installed besides the API's own, e.g. Istio's or cert-manager's.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// CRDPaths are files or folders of CRD YAML to install.
	CRDPaths []string
	// WithoutAPICRDs leaves out the CRDs of this API (a bare runtime cluster).
	WithoutAPICRDs bool
	// Scheme for the client; defaults to client-go's types plus this API.
	Scheme *runtime.Scheme
	// APIServerFlags set kube-apiserver flags, e.g. a service-cluster-ip-range
	// wider than envtest's /24 for more than 250 Services.
	APIServerFlags map[string]string
}

// Env is a running kube-apiserver with etcd.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a client for Config with the Env's scheme.
	Client client.Client
	// Scheme of Client.
	Scheme *runtime.Scheme

	env *envtest.Environment
}

// NewScheme returns client-go's scheme plus apiextensions and this API.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, v1beta2.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("building the test scheme: %v", err)) // static registration; cannot fail at runtime
		}
	}
	return s
}

// Start starts an API server and installs the CRDs. Call Stop when done;
// tests should prefer New, which stops it with the test.
func Start(opts Options) (*Env, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	crds := opts.CRDs
	if !opts.WithoutAPICRDs {
		own, err := crd.All()
		if err != nil {
			return nil, err
		}
		crds = append(own, crds...)
	}
	if opts.Scheme == nil {
		opts.Scheme = NewScheme()
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDs:                  crds,
		CRDDirectoryPaths:     opts.CRDPaths,
		ErrorIfCRDPathMissing: true,
		Scheme:                opts.Scheme,
		CRDInstallOptions: envtest.CRDInstallOptions{
			MaxTime: 2 * time.Minute,
		},
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	for flag, value := range opts.APIServerFlags {
		env.ControlPlane.GetAPIServer().Configure().Set(flag, value)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: opts.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return &Env{Config: cfg, Client: c, Scheme: opts.Scheme, env: env}, nil
}

// New starts an API server for t and stops it when t ends.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	e, err := Start(opts)
	if err != nil {
		t.Fatalf("test API server: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the test API server: %v", err)
		}
	})
	return e
}

// Stop stops the API server and etcd and removes their data.
func (e *Env) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	return nil
}

// Kubeconfig returns a kubeconfig for a new user of the given groups
// (system:masters for an admin), as a runtime's access Secret holds it.
func (e *Env) Kubeconfig(user string, groups ...string) ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", user, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of user %s: %w", user, err)
	}
	return kc, nil
}
