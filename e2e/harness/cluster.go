package harness

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/testenv"
)

// Cluster is a KCP or a runtime.
type Cluster struct {
	Name string
	// Kubeconfig is an admin kubeconfig file, for the harness and for users.
	Kubeconfig string
	Config     *rest.Config
	Client     client.Client
	env        *testenv.Env
}

// StartCluster starts a local control plane (kube-apiserver and etcd) and
// writes its admin kubeconfig into dir.
func StartCluster(name, dir string, opts testenv.Options) (*Cluster, error) {
	env, err := testenv.Start(opts)
	if err != nil {
		return nil, fmt.Errorf("starting the %s control plane: %w", name, err)
	}
	kc, err := env.Kubeconfig("admin", "system:masters")
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Cluster{Name: name, Kubeconfig: path, Config: env.Config, Client: env.Client, env: env}, nil
}

// clusterFromKubeconfig uses an existing cluster.
func clusterFromKubeconfig(name, path string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading the %s kubeconfig %s: %w", name, path, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: testenv.NewScheme()})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", name, err)
	}
	return &Cluster{Name: name, Kubeconfig: path, Config: cfg, Client: c}, nil
}

// Stop stops a cluster the harness started; an existing one stays.
func (c *Cluster) Stop() error {
	if c.env == nil {
		return nil
	}
	return c.env.Stop()
}

// serverAddr is host:port of the cluster's API server.
func (c *Cluster) serverAddr() (string, error) {
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		return "", fmt.Errorf("the API server address of %s: %w", c.Name, err)
	}
	return u.Host, nil
}
