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
	processing := v1beta2.ManifestStatus{State: shared.StateProcessing, Applied: "hash/versions"}
	newManifest := func(uid types.UID, state shared.State) *v1beta2.Manifest {
		return &v1beta2.Manifest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kcp", Name: "m", UID: uid},
			Status:     v1beta2.ManifestStatus{State: state},
		}
	}
	for _, tc := range []struct {
		name           string
		status         v1beta2.ManifestStatus
		stored         shared.State
		laterUID       types.UID
		laterStored    shared.State
		held, restored bool
	}{
		{name: "the first status of an install under way", status: processing, held: true, restored: true, laterUID: "a"},
		{name: "a Manifest with a status already", status: processing, stored: shared.StateReady, laterUID: "a"},
		{name: "nothing applied", status: v1beta2.ManifestStatus{State: shared.StateProcessing}, laterUID: "a"},
		{name: "an error", status: v1beta2.ManifestStatus{State: shared.StateError, Applied: "x"}, laterUID: "a"},
		{name: "a Manifest of the same name recreated", status: processing, held: true, laterUID: "b"},
		{name: "a status written by someone since", status: processing, held: true, laterUID: "a", laterStored: shared.StateWarning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h heldStatuses
			assert.Equal(t, tc.held, h.hold(newManifest("a", tc.stored), tc.status), "held")
			later := newManifest(tc.laterUID, tc.laterStored)
			h.restore(later)
			assert.Equal(t, tc.restored, later.Status.State == shared.StateProcessing, "restored")
			assert.Equal(t, tc.restored, h.pending(later), "pending")
			h.drop(keyOf(later))
			assert.False(t, h.pending(later), "dropped")
		})
	}
}
