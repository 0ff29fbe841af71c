package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// ShardNamespace is the KCP namespace of the shard scenario's operators:
// the suite's operator watches only Namespace, so it never reconciles a
// Kyma of the shards, and the shards never see the suite's.
const ShardNamespace = "kcp-shards"

// The sharding interface of kcp-operator (--shard, issue 49).
const (
	// ShardLabel names the shard a Kyma (and its Manifests and Secrets) is for.
	ShardLabel = shared.ShardLabel
	// ShardAssignedAnnotation is the shard the coordinator assigned; a label
	// that differs from it was set by a user and pins the Kyma.
	ShardAssignedAnnotation = shared.ShardAssignedAnnotation
	// ShardOwnerAnnotation is the shard that claimed the Kyma.
	ShardOwnerAnnotation = shared.ShardOwnerAnnotation
	// ShardsConfigMap holds the shard list (key "shards", comma-separated;
	// the first is the coordinator) in the first watched namespace.
	ShardsConfigMap = "lifecycle-manager-shards"
)

// shardsRelease is the release the shards' RBAC is rendered as: a name of
// its own, so that its cluster-scoped objects are not the suite's.
const shardsRelease = "kcp-operator-shards"

// Shard is one kcp-operator process with --shard.
type Shard struct {
	*Process
	Name string
	// User is the shard's identity in the KCP's audit log: a ServiceAccount
	// of its own, bound to the chart's Roles.
	User string
	// ListenerAddr is the shard's own listener, its --agent-kcp-address.
	ListenerAddr string
	MetricsAddr  string
}

// Shards are kcp-operator processes, one per shard, electing on their own
// Leases in ShardNamespace, with the Kymas of the scenario and the agents
// of those Kymas. Kymas is written once, by CreateKymas.
type Shards struct {
	h     *Harness
	All   []*Shard
	Kymas []*ShardKyma

	stopAgents context.CancelFunc
	agents     sync.WaitGroup
}

// StartShards prepares ShardNamespace (its Watcher, the chart's RBAC for
// one ServiceAccount per shard, the module ShardModule, the shard list
// names) and starts one operator per name with the suite operator's flags,
// --shard and leader election with the given lease. Local mode only.
func (h *Harness) StartShards(ctx context.Context, lease time.Duration, names ...string) (*Shards, error) {
	if !h.Local || h.Operator == nil {
		return nil, errors.New("shards run in local mode, after StartOperator")
	}
	if err := prepareNamespace(ctx, h.KCP.Client, ShardNamespace); err != nil {
		return nil, err
	}
	users, err := h.installShardRBAC(ctx, names)
	if err != nil {
		return nil, err
	}
	if err := h.publishShardModule(ctx); err != nil {
		return nil, err
	}
	s := &Shards{h: h, stopAgents: func() {}}
	if err := s.start(ctx, users, lease, names); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Shards) start(ctx context.Context, users map[string]shardUser, lease time.Duration, names []string) error {
	h := s.h
	if err := s.SetList(ctx, names...); err != nil {
		return err
	}
	for _, name := range names {
		sh, err := h.shard(ctx, name, users[name], lease)
		if err != nil {
			return err
		}
		s.All = append(s.All, sh)
		if err := sh.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	for _, sh := range s.All {
		// A shard that exited (a flag, a refused read) does not come back.
		waitFor(ctx, 2*time.Minute, func() bool { return !sh.Running() || metricsUp(ctx, sh.MetricsAddr) })
		if !sh.Running() || !metricsUp(ctx, sh.MetricsAddr) {
			return fmt.Errorf("%s did not become healthy; its log:\n%s", sh.Process.Name, sh.Tail(8000))
		}
	}
	return nil
}

// shard is the operator of one shard: the suite operator's flags for
// ShardNamespace, its own kubeconfig, ports and listener (direct mode: the
// agents it installs send to that listener), without the conversion
// webhook, which the suite's operator serves.
func (h *Harness) shard(ctx context.Context, name string, kubeconfig shardUser, lease time.Duration) (*Shard, error) {
	ports, err := FreePorts(ctx, 3)
	if err != nil {
		return nil, err
	}
	proc := "kcp-operator-shard-" + name
	sh := &Shard{Name: name, User: kubeconfig.user, ListenerAddr: "localhost:" + strconv.Itoa(ports[0]), MetricsAddr: portAddr(ports[1])}
	args := rewriteArgs(h.Operator.Args, map[string]string{
		"--kubeconfig":                kubeconfig.path,
		"--namespaces":                ShardNamespace,
		"--metrics-bind-address":      sh.MetricsAddr,
		"--health-probe-bind-address": portAddr(ports[2]),
		"--listener-bind-address":     portAddr(ports[0]),
		"--agent-kcp-address":         sh.ListenerAddr,
		"--cert-namespace":            ShardNamespace,
		"--cert-endpoint-namespace":   ShardNamespace,
		"--module-trust-secret":       ShardNamespace + "/" + ModuleTrustSecretName,
	}, leaseFlag, "--webhook-bind-address", "--webhook-service")
	args = append(args, "--shard="+name, leaseFlag+"="+lease.String())
	sh.Process = &Process{
		Name: proc, Bin: h.Bin.Operator, Log: filepath.Join(h.RunDir, "logs", proc+".log"), Args: args,
		Env: []string{"TMPDIR=" + h.tmpDir(proc)},
	}
	return sh, nil
}

// Shard is the shard of that name, nil if there is none.
func (s *Shards) Shard(name string) *Shard {
	for _, sh := range s.All {
		if sh.Name == name {
			return sh
		}
	}
	return nil
}

// ByUser is the shard whose identity user is, nil for none.
func (s *Shards) ByUser(user string) *Shard {
	for _, sh := range s.All {
		if sh.User == user {
			return sh
		}
	}
	return nil
}

// Kill ends a shard for good with SIGKILL, as a lost node would: no
// drain, no released Lease; it is not started again.
func (s *Shards) Kill(name string) error {
	sh := s.Shard(name)
	if sh == nil {
		return fmt.Errorf("no shard %q", name)
	}
	if pid := sh.Pid(); pid > 0 {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("killing shard %s: %w", name, err)
		}
	}
	_ = sh.Stop() // reaps it; a killed process's exit status is no error here
	return nil
}

// SetList writes the shard list; the first name is the coordinator.
func (s *Shards) SetList(ctx context.Context, names ...string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ShardNamespace, Name: ShardsConfigMap}}
	list := strings.Join(names, ",")
	err := s.h.KCP.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		cm.Data = map[string]string{"shards": list}
		err = s.h.KCP.Client.Create(ctx, cm)
	case err == nil:
		cm.Data = map[string]string{"shards": list}
		err = s.h.KCP.Client.Update(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing the shard list %q: %w", list, err)
	}
	s.h.progress("shard list: %s", list)
	return nil
}

// Relabel moves a Kyma to a shard by hand, as a user does: it sets the
// shard label, which pins the Kyma there.
func (s *Shards) Relabel(ctx context.Context, kyma, shard string) error {
	k := &v1beta2.Kyma{}
	if err := s.h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: ShardNamespace, Name: kyma}, k); err != nil {
		return fmt.Errorf("reading Kyma %s: %w", kyma, err)
	}
	patch := client.MergeFrom(k.DeepCopy())
	if k.Labels == nil {
		k.Labels = map[string]string{}
	}
	k.Labels[ShardLabel] = shard
	if err := s.h.KCP.Client.Patch(ctx, k, patch); err != nil {
		return fmt.Errorf("labelling Kyma %s for shard %s: %w", kyma, shard, err)
	}
	return nil
}

// Logs returns the end of every shard's and agent's log.
func (s *Shards) Logs() string {
	out := ""
	for _, sh := range s.All {
		out += fmt.Sprintf("\n----- %s (%s)\n%s", sh.Process.Name, sh.Log, sh.Tail(20000))
	}
	for _, k := range s.Kymas {
		if p := k.agentProcess(); p != nil {
			out += fmt.Sprintf("\n----- %s (%s)\n%s", p.Name, p.Log, p.Tail(4000))
		}
	}
	return out
}

// Close stops the agents and the shards.
func (s *Shards) Close() {
	s.stopAgents()
	s.agents.Wait()
	for _, k := range s.Kymas {
		if p := k.agentProcess(); p != nil {
			_ = p.Stop()
		}
	}
	for _, sh := range s.All {
		_ = sh.Stop()
	}
}

// shardUser is a shard's kubeconfig and the user it authenticates as.
type shardUser struct{ path, user string }

// installShardRBAC applies the kcp-operator chart's RBAC rendered for
// ShardNamespace and, per shard, a ServiceAccount bound by copies of the
// chart's bindings, so that the audit log names each shard's requests.
func (h *Harness) installShardRBAC(ctx context.Context, names []string) (map[string]shardUser, error) {
	values := operatorChartValues(false)
	values["namespaces"] = []any{ShardNamespace}
	objs, err := RenderChart(filepath.Join(RepoRoot(), "charts", "kcp-operator"), shardsRelease, ShardNamespace, values)
	if err != nil {
		return nil, err
	}
	bound := 0
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Role", "ClusterRole":
			if err := h.KCP.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
				client.FieldOwner("helm"), client.ForceOwnership); err != nil {
				return nil, fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
		case "RoleBinding", "ClusterRoleBinding":
			n, err := h.bindShards(ctx, obj, names)
			if err != nil {
				return nil, err
			}
			bound += n
		}
	}
	if bound == 0 {
		return nil, fmt.Errorf("the chart rendered no binding of ServiceAccount %s", shardsRelease)
	}
	users := map[string]shardUser{}
	for _, name := range names {
		sa := shardServiceAccount(name)
		if err := h.KCP.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ShardNamespace, Name: sa}}); err != nil {
			return nil, fmt.Errorf("creating ServiceAccount %s: %w", sa, err)
		}
		kc, err := serviceAccountKubeconfig(ctx, h.KCP, ShardNamespace, sa, h.KCP.Config.Host)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(h.RunDir, sa+".kubeconfig")
		if err := os.WriteFile(path, kc, 0o600); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		users[name] = shardUser{path: path, user: "system:serviceaccount:" + ShardNamespace + ":" + sa}
	}
	h.progress("shards %s run as ServiceAccounts of their own, bound to the chart's Roles in %s", strings.Join(names, ","), ShardNamespace)
	return users, nil
}

func shardServiceAccount(shard string) string { return shardsRelease + "-" + shard }
