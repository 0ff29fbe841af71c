package kyma

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func TestFirstStatusHold(t *testing.T) {
	const limit = time.Minute
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	newKyma := func(uid types.UID, stored shared.State) *v1beta2.Kyma {
		return &v1beta2.Kyma{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kcp", Name: "k", UID: uid},
			Status:     v1beta2.KymaStatus{State: stored},
		}
	}
	processing := v1beta2.KymaStatus{State: shared.StateProcessing, LastOperation: shared.LastOperation{Operation: "waiting for modules"}}
	tests := []struct {
		name   string
		before func(f *firstStatuses) // what was held before
		kyma   *v1beta2.Kyma
		status v1beta2.KymaStatus
		limit  time.Duration
		at     time.Duration // after t0
		held   bool
		// pending: a held status is written at the next chance, even
		// one that did not change
		pending bool
	}{
		{name: "first status, Processing: held", kyma: newKyma("a", ""), status: processing, limit: limit, held: true, pending: true},
		{name: "first status, Ready: written", kyma: newKyma("a", ""), status: v1beta2.KymaStatus{State: shared.StateReady}, limit: limit},
		{name: "first status, Error: written", kyma: newKyma("a", ""), status: v1beta2.KymaStatus{State: shared.StateError}, limit: limit},
		{name: "first status, Warning: written", kyma: newKyma("a", ""), status: v1beta2.KymaStatus{State: shared.StateWarning}, limit: limit},
		{name: "a status written before: not a first one", kyma: newKyma("a", shared.StateReady), status: processing, limit: limit},
		{name: "no hold configured", kyma: newKyma("a", ""), status: processing, limit: 0},
		{
			name:   "held, still within the limit",
			before: func(f *firstStatuses) { f.hold(newKyma("a", ""), processing, limit, t0) },
			kyma:   newKyma("a", shared.StateProcessing), // restored
			status: processing, limit: limit, at: limit - time.Second, held: true, pending: true,
		},
		{
			name:   "held, the limit is up",
			before: func(f *firstStatuses) { f.hold(newKyma("a", ""), processing, limit, t0) },
			kyma:   newKyma("a", shared.StateProcessing),
			status: processing, limit: limit, at: limit, pending: true,
		},
		{
			name:   "held for a Kyma of another UID: a new first status",
			before: func(f *firstStatuses) { f.hold(newKyma("old", ""), processing, limit, t0.Add(-time.Hour)) },
			kyma:   newKyma("a", ""),
			status: processing, limit: limit, held: true, pending: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &firstStatuses{}
			if tc.before != nil {
				tc.before(f)
			}
			assert.Equal(t, tc.held, f.hold(tc.kyma, tc.status, tc.limit, t0.Add(tc.at)))
			assert.Equal(t, tc.pending, f.pending(tc.kyma), "pending")
		})
	}
}

func TestHeldFirstStatusIsReadBackAndDropped(t *testing.T) {
	const limit = time.Minute
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	meta := metav1.ObjectMeta{Namespace: "kcp", Name: "k", UID: "a"}
	held := v1beta2.KymaStatus{State: shared.StateProcessing, Modules: []v1beta2.ModuleStatus{{Name: "m", State: shared.StateProcessing}}}
	f := &firstStatuses{}
	assert.True(t, f.hold(&v1beta2.Kyma{ObjectMeta: meta}, held, limit, t0))
	assert.Equal(t, limit-10*time.Second, f.left(&v1beta2.Kyma{ObjectMeta: meta}, limit, t0.Add(10*time.Second)))

	read := &v1beta2.Kyma{ObjectMeta: meta}
	f.restore(read)
	assert.Equal(t, held, read.Status, "a Kyma read without a status gets the held one")
	read.Status.Modules[0].State = shared.StateReady
	assert.Equal(t, shared.StateProcessing, f.held[kymaKey(read)].status.Modules[0].State, "the held status is a copy")

	patched := &v1beta2.Kyma{ObjectMeta: meta}
	f.reapply(patched)
	assert.Equal(t, held, patched.Status, "a Kyma a metadata patch returned without a status gets the held one again")
	f.reapply(read)
	assert.True(t, f.pending(read), "reapplying keeps the held status")

	other := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp", Name: "k", UID: "b"}}
	assert.False(t, f.pending(other), "another Kyma under the same name")
	assert.Zero(t, f.left(other, limit, t0))

	stored := &v1beta2.Kyma{ObjectMeta: meta, Status: v1beta2.KymaStatus{State: shared.StateReady}}
	f.restore(stored)
	assert.Equal(t, shared.StateReady, stored.Status.State, "a stored status wins")
	assert.False(t, f.pending(stored), "and drops the held one")

	assert.True(t, f.hold(&v1beta2.Kyma{ObjectMeta: meta}, held, limit, t0))
	f.drop(kymaKey(&v1beta2.Kyma{ObjectMeta: meta}))
	assert.False(t, f.pending(&v1beta2.Kyma{ObjectMeta: meta}), "dropped once written")
}
