package shard

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Config is one shard's part in the fleet.
type Config struct {
	Shard string
	// Namespaces are the watched KCP namespaces; the first holds the shard
	// list ConfigMap ListName and the shards' Leases, named by LeaseOf.
	Namespaces []string
	ListName   string
	LeaseOf    func(shard string) string
	// OwnerWait is how soon a claim looks again while the old shard holds
	// its Lease.
	OwnerWait time.Duration
	// Options gives each of the shard's controllers its options.
	Options func() controller.Options
	Events  events.EventRecorder
	Log     logr.Logger
}

// Shard is what Setup registered: the Guard the Kyma's controllers run
// behind, and whether this shard coordinates the fleet.
type Shard struct {
	Guard       *Guard
	Coordinator bool
}

// Setup registers the shard's ownership controller, its start-up release
// and its role watch on mgr, and in the coordinator the assigner. It reads
// the shard list once, before the manager starts.
func Setup(ctx context.Context, mgr manager.Manager, cfg Config) (*Shard, error) {
	key := client.ObjectKey{Namespace: cfg.Namespaces[0], Name: cfg.ListName}
	shards, err := List(ctx, mgr.GetAPIReader(), key)
	if err != nil {
		return nil, err
	}
	s := &Shard{Coordinator: IsCoordinator(cfg.Shard, shards)}
	fence := NewFence()
	s.Guard = &Guard{Shard: cfg.Shard, Fence: fence, Cache: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	o := &Ownership{
		Shard: cfg.Shard, Fence: fence, KCP: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		LeaseNamespace: cfg.Namespaces[0], LeaseOf: cfg.LeaseOf, OwnerWait: cfg.OwnerWait, Events: cfg.Events, Now: time.Now,
	}
	err = ctrl.NewControllerManagedBy(mgr).Named("shard-ownership").For(&v1beta2.Kyma{}).WithOptions(cfg.Options()).Complete(o)
	if err != nil {
		return nil, fmt.Errorf("setting up the shard's ownership controller: %w", err)
	}
	for _, r := range []manager.Runnable{
		&staleRelease{o: o, namespaces: cfg.Namespaces, log: cfg.Log.WithName("release")},
		&roleWatch{shard: cfg.Shard, coordinator: s.Coordinator, lists: mgr.GetClient(), key: key, log: cfg.Log},
	} {
		if err := mgr.Add(r); err != nil {
			return nil, fmt.Errorf("adding the shard's runnables: %w", err)
		}
	}
	cfg.Log.Info("shard", "name", cfg.Shard, "coordinator", s.Coordinator, "shards", shards)
	if s.Coordinator {
		return s, addAssigner(mgr, cfg, key)
	}
	return s, nil
}

// addAssigner watches the metadata of every Kyma, in a cache of its own
// (the manager's holds this shard's Kymas only), and the shard list.
func addAssigner(mgr manager.Manager, cfg Config, key client.ObjectKey) error {
	namespaces := map[string]cache.Config{}
	for _, ns := range cfg.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	all, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
		DefaultNamespaces: namespaces, DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return fmt.Errorf("creating the assigner's cache: %w", err)
	}
	if err := mgr.Add(all); err != nil {
		return fmt.Errorf("adding the assigner's cache: %w", err)
	}
	a := &Assigner{Shard: cfg.Shard, KCP: mgr.GetClient(), Kymas: all, Lists: mgr.GetClient(), ListKey: key}
	err = ctrl.NewControllerManagedBy(mgr).Named("shard-assigner").
		WatchesRawSource(source.Kind(all, kymaMeta(), &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(a.allKymas)).
		WithOptions(cfg.Options()).Complete(a)
	if err != nil {
		return fmt.Errorf("setting up the shard assigner: %w", err)
	}
	return nil
}
