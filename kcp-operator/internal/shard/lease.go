package shard

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// leaseMargin absorbs clock skew between the shards' nodes.
const leaseMargin = time.Second

// leaseHeld is whether the Lease key has a holder that renewed it within
// its duration: a leader that cannot renew stops before the duration ends,
// so a Lease not held means its shard writes no more. A missing Lease, or
// one given up, is not held.
func leaseHeld(ctx context.Context, r client.Reader, key client.ObjectKey, now time.Time) (bool, error) {
	var l coordinationv1.Lease
	if err := r.Get(ctx, key, &l); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading Lease %s: %w", key, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return false, nil
	}
	renewed := l.Spec.RenewTime
	if renewed == nil {
		renewed = l.Spec.AcquireTime
	}
	if renewed == nil || l.Spec.LeaseDurationSeconds == nil {
		return true, nil
	}
	until := renewed.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second + leaseMargin)
	return now.Before(until), nil
}
