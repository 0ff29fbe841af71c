package crd_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/config/crd"
)

func TestAllEmbedsEveryKind(t *testing.T) {
	all, err := crd.All()
	require.NoError(t, err)
	kinds := make([]string, 0, len(all))
	for _, c := range all {
		kinds = append(kinds, c.Spec.Names.Kind)
		assert.Equal(t, "operator.kyma-project.io", c.Spec.Group)
	}
	assert.ElementsMatch(t, []string{"Kyma", "Manifest", "ModuleTemplate", "ModuleReleaseMeta", "Watcher"}, kinds)
}

func TestByKind(t *testing.T) {
	got, err := crd.ByKind("ModuleTemplate", "Kyma")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "moduletemplates.operator.kyma-project.io", got[0].Name)
	assert.Equal(t, "kymas.operator.kyma-project.io", got[1].Name)

	_, err = crd.ByKind("Kyma", "Nope")
	assert.ErrorContains(t, err, `"Nope"`)
}

func TestAllReturnsCopiesToChange(t *testing.T) {
	first, err := crd.All()
	require.NoError(t, err)
	first[0].Spec.Group = "changed.example.com"
	second, err := crd.All()
	require.NoError(t, err)
	assert.Equal(t, "operator.kyma-project.io", second[0].Spec.Group, "a caller's change does not reach the next caller")
}

func BenchmarkByKind(b *testing.B) {
	for b.Loop() {
		if _, err := crd.ByKind("Kyma", "ModuleTemplate", "ModuleReleaseMeta"); err != nil {
			b.Fatal(err)
		}
	}
}
