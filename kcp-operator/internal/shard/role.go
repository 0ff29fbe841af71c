package shard

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// roleCheck is how often a shard looks whether the coordinator moved.
const roleCheck = 5 * time.Second

// roleWatch stops the process when this shard's role changes: the first
// shard of the list runs the assigner and the fleet-wide controllers,
// which are set up at start, so a new role needs a new start.
type roleWatch struct {
	shard       string
	coordinator bool
	lists       client.Reader
	key         client.ObjectKey
	log         logr.Logger
}

// NeedLeaderElection is false: a standby's role is fixed at its start too.
func (w *roleWatch) NeedLeaderElection() bool { return false }

// Start returns an error, which stops the manager, once the role changed.
func (w *roleWatch) Start(ctx context.Context) error {
	tick := time.NewTicker(roleCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		shards, err := List(ctx, w.lists, w.key)
		if err != nil {
			w.log.Error(err, "reading the shard list")
			continue
		}
		if IsCoordinator(w.shard, shards) != w.coordinator {
			return fmt.Errorf("shard %s: the coordinator of the shard list %s changed (now %v): restarting to take up the new role", w.shard, w.key, shards)
		}
	}
}

// staleRelease lets go, once at start, of the Kymas this shard still
// owns that were relabelled while it did not run: its cache never shows
// them, and their new shard waits for them.
type staleRelease struct {
	o          *Ownership
	namespaces []string
	log        logr.Logger
}

// NeedLeaderElection is true: only the shard's leader writes.
func (s *staleRelease) NeedLeaderElection() bool { return true }

// listPage bounds the Kymas one list call returns.
const listPage = 500

// Start walks the Kymas of the watched namespaces once.
func (s *staleRelease) Start(ctx context.Context) error {
	for _, ns := range s.namespaces {
		opts := []client.ListOption{client.InNamespace(ns), client.Limit(listPage)}
		for {
			list := kymaMetaList()
			if err := s.o.APIReader.List(ctx, list, opts...); err != nil {
				s.log.Error(err, "listing Kymas for ones to let go", "namespace", ns)
				break
			}
			for i := range list.Items {
				kyma := &list.Items[i]
				kyma.SetGroupVersionKind(kymaMeta().GroupVersionKind())
				if err := s.o.letGo(ctx, kyma); err != nil {
					s.log.Error(err, "letting go of a Kyma relabelled while this shard was down")
				}
			}
			if list.Continue == "" {
				break
			}
			opts = []client.ListOption{client.InNamespace(ns), client.Limit(listPage), client.Continue(list.Continue)}
		}
	}
	return nil
}
