package runtimewrite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/kcp-operator/internal/runtimewrite"
)

// configMap is the one object of the test with data.
func configMap(data map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName("created")
	u.SetNamespace("default")
	_ = unstructured.SetNestedStringMap(u.Object, data, "data")
	return u
}

func stored(t *testing.T, c client.Client) *unstructured.Unstructured {
	t.Helper()
	got := configMap(nil)
	require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(got), got))
	return got
}

// TestWritesAfterACreate checks against a real API server that an object
// the operator created, not applied, behaves under later applies as if it
// had been applied from the start: an apply removes what it no longer
// sets, keeps what others set, and leaves only the operator's Apply entry.
func TestWritesAfterACreate(t *testing.T) {
	env := testenv.New(t, testenv.Options{WithoutAPICRDs: true})
	c, ctx := env.Client, t.Context()

	obj := configMap(map[string]string{"kept": "1", "dropped": "2"})
	created, err := runtimewrite.Create(ctx, c, obj)
	require.NoError(t, err)
	require.True(t, created)
	assert.NotEmpty(t, obj.GetUID(), "the object is filled with what the server stored")

	again := configMap(map[string]string{"other": "3"})
	created, err = runtimewrite.Create(ctx, c, again)
	require.NoError(t, err)
	assert.False(t, created, "an existing object is not created again")
	assert.Empty(t, again.GetUID(), "nor is the caller's object changed")

	theirs := stored(t, c)
	require.NoError(t, unstructured.SetNestedField(theirs.Object, "4", "data", "theirs"))
	require.NoError(t, c.Update(ctx, theirs, client.FieldOwner("someone-else")))

	next := configMap(map[string]string{"kept": "1", "added": "5"})
	require.NoError(t, runtimewrite.ApplyOwned(ctx, c, next))
	data, _, _ := unstructured.NestedStringMap(stored(t, c).Object, "data")
	assert.Equal(t, map[string]string{"kept": "1", "added": "5", "theirs": "4"}, data,
		"the field the operator dropped is gone, the one someone else set stays")
	data, _, _ = unstructured.NestedStringMap(next.Object, "data")
	assert.Equal(t, "5", data["added"], "the object is filled with what the server stored")

	var ours []metav1.ManagedFieldsOperationType
	for _, e := range stored(t, c).GetManagedFields() {
		if e.Manager == runtimewrite.FieldOwner {
			ours = append(ours, e.Operation)
		}
	}
	assert.Equal(t, []metav1.ManagedFieldsOperationType{metav1.ManagedFieldsOperationApply}, ours)

	last := configMap(map[string]string{"kept": "1"})
	require.NoError(t, runtimewrite.ApplyOwned(ctx, c, last))
	data, _, _ = unstructured.NestedStringMap(stored(t, c).Object, "data")
	assert.Equal(t, map[string]string{"kept": "1", "theirs": "4"}, data, "later applies prune as before")
}
