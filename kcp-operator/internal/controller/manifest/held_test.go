package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func TestHeldStatuses(t *testing.T) {
	deployment := shared.Resource{Name: "d", Namespace: "ns", GroupVersionKind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}
	config := shared.Resource{Name: "c", Namespace: "ns", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
	namespace := shared.Resource{Name: "ns", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"}}
	recorded := v1beta2.ManifestStatus{State: shared.StateProcessing, Synced: []shared.Resource{deployment, config},
		Conditions: []metav1.Condition{{Type: v1beta2.ConditionResources, Status: metav1.ConditionFalse, Reason: ReasonApplying}}}
	applied := v1beta2.ManifestStatus{State: shared.StateProcessing, Applied: "hash/versions", Synced: []shared.Resource{config, deployment}}
	withStatus := func(uid types.UID, status v1beta2.ManifestStatus) *v1beta2.Manifest {
		return &v1beta2.Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp", Name: "m", UID: uid}, Status: *status.DeepCopy()}
	}
	ready := applied
	ready.State = shared.StateReady
	refused := applied
	refused.Synced = []shared.Resource{deployment}
	created := applied
	created.Synced = []shared.Resource{deployment, config, namespace}
	created.Created = []v1beta2.CreatedResource{{Resource: namespace, UID: "n"}}
	written := recorded
	written.Conditions = nil
	for _, tc := range []struct {
		name           string
		stored, status v1beta2.ManifestStatus
		laterUID       types.UID
		later          *v1beta2.ManifestStatus
		held, restored bool
	}{
		{name: "the status after the recorded apply", stored: recorded, status: applied, held: true, restored: true, laterUID: "a"},
		{name: "a stored status that is not the record before an apply", stored: written, status: applied, laterUID: "a"},
		{name: "not Processing", stored: recorded, status: ready, laterUID: "a"},
		{name: "other objects than recorded: a refusal", stored: recorded, status: refused, laterUID: "a"},
		{name: "a namespace created: its UID is written at once", stored: recorded, status: created, laterUID: "a"},
		{name: "a first install: nothing recorded, all of it labelled", stored: v1beta2.ManifestStatus{}, status: applied, held: true, restored: true, laterUID: "a"},
		{name: "a first install that created a namespace: its annotation names the Manifest", stored: v1beta2.ManifestStatus{}, status: created,
			held: true, restored: true, laterUID: "a"},
		{name: "a first install not Processing", stored: v1beta2.ManifestStatus{}, status: ready, laterUID: "a"},
		{name: "a Manifest of the same name recreated", stored: recorded, status: applied, held: true, laterUID: "b"},
		{name: "a status written by someone since", stored: recorded, status: applied, held: true, laterUID: "a", later: &written},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h heldStatuses
			assert.Equal(t, tc.held, h.hold(withStatus("a", tc.stored), tc.status), "held")
			later := withStatus(tc.laterUID, tc.stored)
			if tc.later != nil {
				later.Status = *tc.later.DeepCopy()
			}
			h.restore(later)
			assert.Equal(t, tc.restored, later.Status.Applied != "", "restored")
			assert.Equal(t, tc.restored, h.pending(later), "pending")
			h.drop(keyOf(later))
			assert.False(t, h.pending(later), "dropped")
		})
	}
}

func TestUnionOf(t *testing.T) {
	a := shared.Resource{Name: "a", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
	b := shared.Resource{Name: "b", GroupVersionKind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
	bInV2 := b
	bInV2.Version = "v2"
	union, grows := unionOf([]shared.Resource{a}, []shared.Resource{bInV2, a})
	assert.True(t, grows)
	assert.Equal(t, []shared.Resource{a, bInV2}, union)
	_, grows = unionOf([]shared.Resource{a, b}, []shared.Resource{bInV2})
	assert.False(t, grows, "an object is the same whatever version it was applied in")
}
