package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
)

func TestAssociatedLeftSaysWhatTheDeletionWaitsFor(t *testing.T) {
	tests := []struct {
		name    string
		left    leftOfKinds
		want    shared.State
		wantMsg string
	}{
		{"nothing left", leftOfKinds{}, "", ""},
		{"only objects being deleted", leftOfKinds{terminating: []string{"Gadget a/b"}}, shared.StateDeleting,
			"waiting for objects of the module's associated kinds to be deleted: Gadget a/b"},
		{"someone's objects", leftOfKinds{foreign: []string{"Gadget a/mine"}, terminating: []string{"Gadget a/b"}}, shared.StateWarning,
			"which the lifecycle manager does not delete: Gadget a/mine, Gadget a/b"},
		{"many", leftOfKinds{foreign: []string{"G 1", "G 2", "G 3", "G 4", "G 5", "G 6"}}, shared.StateWarning, "G 4, G 5 and more"},
		{"more beyond the page", leftOfKinds{terminating: []string{"G 1"}, more: true}, shared.StateDeleting, "G 1 and more"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obs := tc.left.observation()
			if tc.want == "" {
				assert.Nil(t, obs)
				return
			}
			require.NotNil(t, obs)
			assert.Equal(t, tc.want, obs.state)
			assert.Contains(t, obs.message, tc.wantMsg)
			assert.True(t, obs.keepSynced, "what the module holds stays recorded until it is gone")
			assert.NotContains(t, obs.message, "G 6")
		})
	}
}
