package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
)

// TestARestrictedModuleIsOnlyInTheCatalogOfTheKymasItSelects: the template
// and release meta of a module with a kymaSelector reach the runtime of a
// Kyma the selector selects, and not the runtime of another.
func TestARestrictedModuleIsOnlyInTheCatalogOfTheKymasItSelects(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	createNamespaces(t, env.Client)
	for _, module := range []string{"open", "secret"} {
		require.NoError(t, env.Client.Create(t.Context(), &v1beta2.ModuleTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: module + "-1.0.0", Namespace: kcpNS},
			Spec: v1beta2.ModuleTemplateSpec{ModuleName: module, Version: "1.0.0",
				Descriptor: runtime.RawExtension{Raw: []byte(`{"component":{"name":"kyma-project.io/module/` + module + `"}}`)}},
		}))
		meta := &v1beta2.ModuleReleaseMeta{
			ObjectMeta: metav1.ObjectMeta{Name: module, Namespace: kcpNS},
			Spec: v1beta2.ModuleReleaseMetaSpec{ModuleName: module,
				Channels: []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "1.0.0"}}},
		}
		if module == "secret" {
			meta.Spec.KymaSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kyma-project.io/global-account-id": "ga-1"}}
		}
		require.NoError(t, env.Client.Create(t.Context(), meta))
	}

	other := kyma()
	other.Labels = map[string]string{"kyma-project.io/global-account-id": "ga-2"}
	_, err := Sync(t.Context(), env.Client, other, runtimeClient(t, env, &slowWrites{}))
	require.NoError(t, err)
	assert.Equal(t, []string{"open-1.0.0"}, runtimeNames(t, env.Client, &v1beta2.ModuleTemplateList{}))
	assert.Equal(t, []string{"open"}, runtimeNames(t, env.Client, &v1beta2.ModuleReleaseMetaList{}))

	selected := kyma()
	selected.Labels = map[string]string{"kyma-project.io/global-account-id": "ga-1"}
	_, err = Sync(t.Context(), env.Client, selected, runtimeClient(t, env, &slowWrites{}))
	require.NoError(t, err)
	assert.Equal(t, []string{"open-1.0.0", "secret-1.0.0"}, runtimeNames(t, env.Client, &v1beta2.ModuleTemplateList{}))
	assert.Equal(t, []string{"open", "secret"}, runtimeNames(t, env.Client, &v1beta2.ModuleReleaseMetaList{}))
}

func runtimeNames(t *testing.T, c client.Client, list client.ObjectList) []string {
	t.Helper()
	require.NoError(t, c.List(t.Context(), list, client.InNamespace(runtimeNS)))
	var names []string
	for _, obj := range items(list) {
		names = append(names, obj.GetName())
	}
	return names
}
