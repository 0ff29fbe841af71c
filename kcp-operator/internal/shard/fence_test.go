package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"
)

func TestFence(t *testing.T) {
	f := NewFence()
	k := types.NamespacedName{Namespace: "kcp-system", Name: "k1"}
	assert.False(t, f.Enter(k), "an unclaimed Kyma lets no reconcile in")
	f.Open(k)
	assert.True(t, f.IsOpen(k))
	assert.True(t, f.Enter(k))
	assert.True(t, f.Enter(k))
	assert.False(t, f.Close(k), "two reconciles still run")
	assert.False(t, f.Enter(k), "a Kyma being let go lets no reconcile in")
	f.Exit(k)
	assert.False(t, f.Close(k), "one reconcile still runs")
	f.Exit(k)
	assert.True(t, f.Close(k))
	assert.False(t, f.IsOpen(k))
	f.Resume(k)
	assert.False(t, f.IsOpen(k), "a Kyma let go is opened only by a claim")
	f.Forget(k)
	f.Resume(k)
	assert.True(t, f.IsOpen(k), "after a restart (or once forgotten) the owner annotation opens it")
}
