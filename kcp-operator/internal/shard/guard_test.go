package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lifecycle-manager/kcp-operator/internal/shard"
)

// A reconcile of a Kyma this shard has not claimed yet is turned away and
// comes back at the low priority of an initial list: a shard taking over
// many Kymas finishes those it holds, whose changes come at the normal
// priority, before it starts on the next. Once claimed, it runs.
func TestAnUnclaimedKymaWaitsAtLowPriority(t *testing.T) {
	key := newKyma(t, "queued", "prio-a")
	fence := shard.NewFence()
	g := &shard.Guard{Shard: "prio-a", Fence: fence, Cache: kcp.Client, APIReader: kcp.Client}
	ran := 0
	next := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		ran++
		return reconcile.Result{}, nil
	})
	req := reconcile.Request{NamespacedName: key}

	res, err := g.Kymas(next).Reconcile(context.Background(), req)
	require.NoError(t, err)
	assert.Zero(t, ran, "not claimed: turned away")
	assert.Positive(t, res.RequeueAfter)
	assert.Equal(t, ptr.To(handler.LowPriority), res.Priority)

	fence.Open(key)
	res, err = g.Kymas(next).Reconcile(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 1, ran, "claimed: runs")
	assert.Equal(t, reconcile.Result{}, res)
}
