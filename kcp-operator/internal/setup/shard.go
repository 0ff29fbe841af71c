package setup

import (
	"context"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	watcherctrl "github.com/lifecycle-manager/kcp-operator/internal/controller/watcher"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// ownerWait is how often a shard looks whether the old shard of a Kyma
// let go of it.
const ownerWait = 2 * time.Second

// addShardCaches narrows the caches of a shard to its part of the fleet:
// its Kymas, their Manifests and Secrets; and adds the shard list.
func addShardCaches(byObject map[client.Object]cache.ByObject, name string) {
	mine, _ := labels.NewRequirement(shared.ShardLabel, selection.Equals, []string{name})
	kymaSecrets, _ := labels.NewRequirement(shared.KymaNameLabel, selection.Exists, nil)
	byObject[&v1beta2.Kyma{}] = cache.ByObject{Label: labels.NewSelector().Add(*mine)}
	byObject[&v1beta2.Manifest{}] = cache.ByObject{Label: labels.NewSelector().Add(*mine)}
	byObject[&corev1.Secret{}] = cache.ByObject{Label: labels.NewSelector().Add(*kymaSecrets, *mine)}
	byObject[&corev1.ConfigMap{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", options.ShardsConfigMap)}
}

func (b *builder) setupShard(ctx context.Context) (*shard.Shard, error) {
	return shard.Setup(ctx, b.mgr, shard.Config{
		Shard: b.opts.Shard, Namespaces: b.opts.Namespaces, ListName: options.ShardsConfigMap, LeaseOf: options.LeaseOf,
		OwnerWait: ownerWait, Options: func() controller.Options { return controllerOptions(b.opts, b.opts.KymaConcurrency) },
		Events: b.events("lifecycle-manager-shard"), Log: b.log.WithName("shard"),
	})
}

// route is this shard's own event route in gateway mode: the host its
// agents post to and its listener Service; nil when unsharded.
func (b *builder) route() *watcherctrl.Route {
	if b.shard == nil {
		return nil
	}
	r := &watcherctrl.Route{Shard: b.opts.Shard, Coordinator: b.shard.Coordinator}
	if b.opts.AgentKCPAddress != "" {
		r.Host = b.opts.AgentKCPAddress
		if host, _, err := net.SplitHostPort(r.Host); err == nil {
			r.Host = host
		}
	}
	ns, name := b.opts.Replicas.ListenerServiceKey()
	r.Service = types.NamespacedName{Namespace: ns, Name: name}
	return r
}

// unlabelledSecrets lets a shard read, and label, access Secrets its cache
// misses; nil when unsharded: that cache holds every Kyma's Secrets.
func unlabelledSecrets(mgr manager.Manager, name string) func(context.Context, *v1beta2.Kyma) ([]corev1.Secret, error) {
	if name == "" {
		return nil
	}
	return shard.UnlabelledSecrets(mgr.GetAPIReader(), mgr.GetClient(), name)
}
