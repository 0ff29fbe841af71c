package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
)

func TestTarget(t *testing.T) {
	shards := []string{"a", "b", "c"}
	id := "runtime-1"
	hashed := Assign(id, shards)
	other := "a"
	if hashed == "a" {
		other = "b"
	}
	now := metav1.NewTime(time.Now())
	tests := []struct {
		name            string
		label, assigned string
		deleting        bool
		want            string
	}{
		{name: "unlabelled gets the hashed shard", want: hashed},
		{name: "assigned and in place stays", label: hashed, assigned: hashed},
		{name: "assigned elsewhere moves to the hashed shard", label: other, assigned: other, want: hashed},
		{name: "pinned by hand stays", label: other, assigned: hashed},
		{name: "pinned without an assignment stays", label: other},
		{name: "on a shard that left the list moves", label: "gone", assigned: "gone", want: hashed},
		{name: "pinned to a shard that left the list moves", label: "gone", want: hashed},
		{name: "deleting stays with its shard", label: other, assigned: other, deleting: true},
		{name: "deleting on a shard that left moves", label: "gone", deleting: true, want: hashed},
	}
	for _, tc := range tests {
		k := kymaMeta()
		k.Name = "k"
		k.Labels = map[string]string{shared.RuntimeIDLabel: id}
		if tc.label != "" {
			k.Labels[shared.ShardLabel] = tc.label
		}
		if tc.assigned != "" {
			k.Annotations = map[string]string{shared.ShardAssignedAnnotation: tc.assigned}
		}
		if tc.deleting {
			k.DeletionTimestamp = &now
		}
		assert.Equal(t, tc.want, target(k, shards), tc.name)
	}
}
