package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

func runtimeCatalog(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var templates v1beta2.ModuleTemplateList
	require.NoError(t, runtimeEnv.Client.List(t.Context(), &templates, client.InNamespace(ns)))
	for _, tmpl := range templates.Items {
		out["template/"+tmpl.Name] = tmpl.ResourceVersion
	}
	var metas v1beta2.ModuleReleaseMetaList
	require.NoError(t, runtimeEnv.Client.List(t.Context(), &metas, client.InNamespace(ns)))
	for _, m := range metas.Items {
		out["meta/"+m.Name] = m.ResourceVersion
	}
	return out
}

func TestCatalogSyncGatesAndFollowsTheKCP(t *testing.T) {
	publish(t, module{Name: "papa", Version: "1.0.0"})
	releaseMeta(t, "papa", map[string]string{"regular": "1.0.0"})
	publish(t, module{Name: "quebec", Version: "1.0.0"})
	releaseMeta(t, "quebec", map[string]string{"regular": "1.0.0"}, func(m *v1beta2.ModuleReleaseMeta) { m.Spec.Beta = true })
	publish(t, module{Name: "romeo", Version: "1.0.0", Channel: "regular", Labels: map[string]string{shared.InternalLabel: "true"}})
	publish(t, module{Name: "sierra", Version: "1.0.0", Channel: "regular", Labels: map[string]string{shared.SyncLabel: "false"}})
	publish(t, module{Name: "tango", Version: "1.0.0", Mandatory: true})

	newKyma(t, "catalog-plain")
	newKyma(t, "catalog-beta", func(k *v1beta2.Kyma) { k.Labels[shared.BetaLabel] = "true" })
	eventuallyKyma(t, "catalog-plain", "Ready", stateIs(shared.StateReady))
	eventuallyKyma(t, "catalog-beta", "Ready", stateIs(shared.StateReady))

	plain, beta := runtimeCatalog(t, "catalog-plain"), runtimeCatalog(t, "catalog-beta")
	assert.Contains(t, plain, "template/papa-1.0.0")
	assert.Contains(t, plain, "meta/papa")
	assert.NotContains(t, plain, "template/quebec-1.0.0", "beta modules stay out of non-beta runtimes")
	assert.NotContains(t, plain, "meta/quebec")
	assert.Contains(t, beta, "template/quebec-1.0.0")
	assert.Contains(t, beta, "meta/quebec")
	for _, cat := range []map[string]string{plain, beta} {
		assert.NotContains(t, cat, "template/romeo-1.0.0", "internal modules need the internal label")
		assert.NotContains(t, cat, "template/sierra-1.0.0", "sync=false keeps a template out")
		assert.NotContains(t, cat, "template/tango-1.0.0", "mandatory modules are not in the catalog")
	}

	// Removing a template from the KCP removes it from the runtimes; the
	// rest of the catalog is not rewritten.
	tmpl := &v1beta2.ModuleTemplate{}
	require.NoError(t, kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: "papa-1.0.0"}, tmpl))
	require.NoError(t, kcp.Client.Delete(t.Context(), tmpl))
	require.Eventually(t, func() bool {
		_, plainHas := runtimeCatalog(t, "catalog-plain")["template/papa-1.0.0"]
		_, betaHas := runtimeCatalog(t, "catalog-beta")["template/papa-1.0.0"]
		return !plainHas && !betaHas
	}, timeout, tick, "the deleted template leaves every runtime catalog")
	after := runtimeCatalog(t, "catalog-plain")
	assert.Equal(t, plain["meta/papa"], after["meta/papa"], "unchanged objects are not written again")
}
