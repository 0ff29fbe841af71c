package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The environment of clusters mode; hack/realnode/e2e.sh and e2e/kind-up.sh
// print it.
const (
	// EnvKCPKubeconfig and EnvSKRKubeconfig are admin kubeconfigs of the
	// KCP (with charts/kcp-operator installed) and of the runtime.
	EnvKCPKubeconfig = "E2E_KCP_KUBECONFIG"
	EnvSKRKubeconfig = "E2E_SKR_KUBECONFIG"
	// EnvKymaName names the runtime's Kyma (default kyma-1).
	EnvKymaName = "E2E_KYMA_NAME"
	// EnvRegistry is the module registry (host[:port][/path]) as the
	// operator reaches it; it serves plain HTTP and the suite pushes to it.
	EnvRegistry = "E2E_REGISTRY"
	// EnvEventsAddr is the operator's event listener as this process
	// reaches it (host:port); the listener's certificate names the host.
	EnvEventsAddr = "E2E_KCP_EVENTS_ADDR"
	// EnvMetricsAddr is the operator's metrics endpoint (host:port).
	EnvMetricsAddr = "E2E_KCP_METRICS_ADDR"
	// EnvSKRServer is the runtime's API server as the operator reaches it
	// (https://host:port). With it the harness installs
	// charts/kcp-operator-runtime into the runtime and gives the operator a
	// token of its ServiceAccount, as in local mode; without it the
	// operator gets EnvSKRKubeconfig as it is.
	EnvSKRServer = "E2E_SKR_SERVER"
	// EnvOperatorDeployment names the operator's Deployment in Namespace
	// (default kcp-operator), which StopOperator scales to zero.
	EnvOperatorDeployment = "E2E_KCP_OPERATOR_DEPLOYMENT"
)

// useClusters connects to existing clusters with the operator's chart
// installed, builds modulectl and publishes the sample module, as the local
// mode does for its own clusters.
func (h *Harness) useClusters(ctx context.Context, kcpKC, skrKC string) error {
	missing := []string{}
	env := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	h.Registry, h.ListenerAddr, h.MetricsAddr = env(EnvRegistry), env(EnvEventsAddr), env(EnvMetricsAddr)
	if len(missing) > 0 {
		return fmt.Errorf("clusters mode needs %s (hack/realnode/e2e.sh env prints them)", strings.Join(missing, ", "))
	}
	var err error
	if h.KCP, err = clusterFromKubeconfig("kcp", kcpKC); err != nil {
		return err
	}
	skr, err := clusterFromKubeconfig("runtime-1", skrKC)
	if err != nil {
		return err
	}
	name := os.Getenv(EnvKymaName)
	if name == "" {
		name = "kyma-1"
	}
	rt := &Runtime{Cluster: skr, KymaName: name, RuntimeID: name}
	h.Runtimes = []*Runtime{rt}
	if server := os.Getenv(EnvSKRServer); server != "" {
		if err := h.installRuntimeAccess(ctx, rt, server); err != nil {
			return err
		}
	}
	h.progress("building modulectl and the other programs")
	if h.Bin, err = Build(ctx, filepath.Join(h.RunDir, "bin")); err != nil {
		return err
	}
	return h.publishSample(ctx)
}

// scaleOperator scales the operator's Deployment and waits until its pods
// are gone (0) or it serves metrics again.
func (h *Harness) scaleOperator(ctx context.Context, replicas int32) error {
	name := os.Getenv(EnvOperatorDeployment)
	if name == "" {
		name = "kcp-operator"
	}
	dep := &appsv1.Deployment{}
	if err := h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, dep); err != nil {
		return fmt.Errorf("reading the operator's Deployment: %w", err)
	}
	patch := client.MergeFrom(dep.DeepCopy())
	dep.Spec.Replicas = &replicas
	if err := h.KCP.Client.Patch(ctx, dep, patch); err != nil {
		return fmt.Errorf("scaling the operator's Deployment to %d: %w", replicas, err)
	}
	h.progress("scaled Deployment %s/%s to %d", Namespace, name, replicas)
	done := func() bool { return h.operatorHealthy(ctx) }
	if replicas == 0 {
		done = func() bool {
			var pods corev1.PodList
			err := h.KCP.Client.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels))
			return err == nil && len(pods.Items) == 0
		}
	}
	if !waitFor(ctx, 3*time.Minute, done) {
		return fmt.Errorf("the operator's Deployment did not reach %d replicas", replicas)
	}
	return nil
}
