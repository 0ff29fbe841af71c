package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// ShardModule is the shard scenario's module: only namespaced objects, so
// that several Kymas share a runtime API server through the sync-namespace
// annotation (the sample module's CRD and ClusterRole would be claimed by
// the first of them).
const (
	ShardModule           = "sharded"
	ShardModuleDeployment = ShardModule + "-operator"
	ShardModuleConfigMap  = ShardModule + "-settings"
)

const shardModuleManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: sharded-operator
  labels: {app.kubernetes.io/name: sharded-operator}
spec:
  replicas: 1
  selector:
    matchLabels: {app.kubernetes.io/name: sharded-operator}
  template:
    metadata:
      labels: {app.kubernetes.io/name: sharded-operator}
    spec:
      containers:
        - name: manager
          image: example.invalid/sharded-operator:1.0.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sharded-settings
data:
  version: "1.0.0"
`

// ShardKyma is a Kyma of the shard scenario: its runtime is a namespace
// (Namespace, by the sync-namespace annotation) of one of the harness's
// runtime API servers, with an agent of its own.
type ShardKyma struct {
	Runtime   *Runtime
	Name      string
	RuntimeID string
	// Namespace is the Kyma's namespace in the runtime: the runtime Kyma,
	// the module's objects and the agent are there.
	Namespace string
	AgentPort int
	// AgentMetricsPort serves the first agent's metrics; a replacement
	// gets a port of its own while the one it replaces drains.
	AgentMetricsPort int

	mu         sync.Mutex
	agent      *Process
	generation int64 // of the agent's Deployment the process runs
}

// RuntimeKymaKey is where the Kyma's runtime Kyma is.
func (k *ShardKyma) RuntimeKymaKey() client.ObjectKey {
	return client.ObjectKey{Namespace: k.Namespace, Name: shared.DefaultRuntimeKymaName}
}

func (k *ShardKyma) agentProcess() *Process {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.agent
}

// AgentKCPAddr is the KCP address the Kyma's agent process runs with,
// empty while none runs.
func (k *ShardKyma) AgentKCPAddr() string {
	p := k.agentProcess()
	if p == nil || !p.Running() {
		return ""
	}
	return envValue(p.Env, "KCP_ADDR")
}

// publishShardModule publishes ShardModule 1.0.0 to channel regular into
// ShardNamespace with modulectl.
func (h *Harness) publishShardModule(ctx context.Context) error {
	dir := filepath.Join(h.RunDir, "catalog-shards")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	manifest := filepath.Join(dir, "manifest.yaml")
	if err := os.WriteFile(manifest, []byte(shardModuleManifest), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", manifest, err)
	}
	template, meta := filepath.Join(dir, ShardModule+"-1.0.0.yaml"), filepath.Join(dir, ShardModule+".yaml")
	cmd := exec.CommandContext(ctx, h.Bin.Modulectl, "publish", "--name", ShardModule, "--version", "1.0.0",
		"--manifest", manifest, "--registry", h.Registry, "--insecure", "--channel", "regular",
		"--namespace", ShardNamespace, "--output", template, "--release-meta", meta, "--quiet")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("modulectl publish %s: %w\n%s", ShardModule, err, out)
	}
	for _, file := range []string{template, meta} {
		if err := ApplyFile(ctx, h.KCP.Client, file, ShardNamespace, "e2e-harness"); err != nil {
			return err
		}
	}
	return nil
}

// CreateKymas creates perRuntime Kymas on each runtime of the harness,
// without a shard label (the coordinator assigns them), each with
// ShardModule, its access Secret and its own sync namespace and agent ports,
// and then plays the kubelet for their agents. Call it once.
func (s *Shards) CreateKymas(ctx context.Context, perRuntime int) error {
	if len(s.Kymas) > 0 {
		return fmt.Errorf("the shards have their Kymas already")
	}
	for i := range perRuntime * len(s.h.Runtimes) {
		rt := s.h.Runtimes[i%len(s.h.Runtimes)]
		ports, err := FreePorts(ctx, 2)
		if err != nil {
			return err
		}
		n := strconv.Itoa(i + 1)
		k := &ShardKyma{Runtime: rt, Name: "shard-kyma-" + n, RuntimeID: "shard-runtime-" + n, Namespace: "shard-" + n,
			AgentPort: ports[0], AgentMetricsPort: ports[1]}
		if err := s.createKyma(ctx, k); err != nil {
			return err
		}
		s.Kymas = append(s.Kymas, k)
	}
	agentCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopAgents = cancel
	s.agents.Go(func() { s.runAgents(agentCtx) })
	return nil
}

func (s *Shards) createKyma(ctx context.Context, k *ShardKyma) error {
	kubeconfig, err := k.Runtime.operatorKubeconfig()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + k.Name, Namespace: ShardNamespace,
			Labels: map[string]string{shared.KymaNameLabel: k.Name}},
		Data: map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}
	if err := s.h.KCP.Client.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the access Secret of %s: %w", k.Name, err)
	}
	kyma := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: ShardNamespace,
			Labels: map[string]string{shared.RuntimeIDLabel: k.RuntimeID},
			Annotations: map[string]string{
				shared.SyncNamespaceAnnotation:   k.Namespace,
				shared.AgentWebhookURLAnnotation: "https://" + portAddr(k.AgentPort),
			}},
		Spec: v1beta2.KymaSpec{Channel: "regular", Modules: []v1beta2.Module{{Name: ShardModule}}},
	}
	s.h.progress("creating Kyma %s in %s, runtime namespace %s of %s", k.Name, ShardNamespace, k.Namespace, k.Runtime.Name)
	if err := s.h.KCP.Client.Create(ctx, kyma); err != nil {
		return fmt.Errorf("creating Kyma %s: %w", k.Name, err)
	}
	return nil
}

// runAgents plays the kubelet for the Kymas' agents until ctx ends: an
// agent runs while its Deployment and Secret exist, and a changed
// Deployment (a new shard's KCP address) restarts it, as a rollout would.
// The suite's kubelets mark the Deployments available.
func (s *Shards) runAgents(ctx context.Context) {
	for ctx.Err() == nil {
		for _, k := range s.Kymas {
			if err := s.agentPass(ctx, k); err != nil && ctx.Err() == nil {
				s.h.progress("agent of %s: %v", k.Name, err)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *Shards) agentPass(ctx context.Context, k *ShardKyma) error {
	c := k.Runtime.Client
	d := &appsv1.Deployment{}
	err := c.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: "skr-agent-" + k.Namespace}, d)
	if apierrors.IsNotFound(err) {
		k.stopAgent()
		return nil
	}
	if err != nil {
		return err
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: "skr-agent-tls"}, secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	dir := filepath.Join(s.h.RunDir, "shard-agents", k.Namespace)
	if err := MountSecret(dir, secret.Data); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.agent != nil && k.agent.Running() && k.generation == d.Generation {
		return nil
	}
	metricsPort := k.AgentMetricsPort
	if old := k.agent; old != nil {
		// A rollout (maxSurge 1) starts the new pod before the old one
		// drains its queue, which takes up to its drain timeout when its
		// shard is gone. The new process binds the webhook port once the
		// old one closed it (a failed start is retried by the next pass),
		// and its metrics on a port of its own.
		s.agents.Go(func() { _ = old.Stop() })
		port, err := FreePort(ctx)
		if err != nil {
			return err
		}
		metricsPort = port
	}
	p := AgentProcess(s.h.Bin.Agent, filepath.Join(s.h.RunDir, "logs", k.Namespace+"-skr-agent.log"), dir, d, k.AgentPort, metricsPort)
	p.Name = "skr-agent (" + k.Name + ")"
	if k.agent == nil || k.generation != d.Generation { // not each retry of a start
		s.h.progress("%s: starting skr-agent (webhook on %s, pushing to %s)", k.Name, portAddr(k.AgentPort), envValue(p.Env, "KCP_ADDR"))
	}
	k.agent, k.generation = p, d.Generation
	return p.Start(context.WithoutCancel(ctx))
}

func (k *ShardKyma) stopAgent() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.agent != nil && k.agent.Running() {
		_ = k.agent.Stop()
	}
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- { // the later value wins
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// bindShards creates, for a binding of the chart's ServiceAccount, one
// copy per shard that binds the shard's ServiceAccount instead; it returns
// the number of copies.
func (h *Harness) bindShards(ctx context.Context, binding *unstructured.Unstructured, names []string) (int, error) {
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	ours := false
	for _, sub := range subjects {
		m, _ := sub.(map[string]any)
		ours = ours || (m["kind"] == "ServiceAccount" && m["name"] == shardsRelease)
	}
	if !ours {
		return 0, nil
	}
	for _, name := range names {
		cp := binding.DeepCopy()
		cp.SetName(binding.GetName() + "-" + name)
		if err := unstructured.SetNestedSlice(cp.Object, []any{map[string]any{
			"kind": "ServiceAccount", "name": shardServiceAccount(name), "namespace": ShardNamespace,
		}}, "subjects"); err != nil {
			return 0, err
		}
		if err := h.KCP.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(cp),
			client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			return 0, fmt.Errorf("applying %s %s/%s: %w", cp.GetKind(), cp.GetNamespace(), cp.GetName(), err)
		}
	}
	return len(names), nil
}
