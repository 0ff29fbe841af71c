package kyma_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/testing/testmodule"
)

// The suite's OCI registry.
var reg *testmodule.Registry

func startRegistry() func() {
	reg = testmodule.StartRegistry()
	return reg.Close
}

// module is a test module (see testmodule.Module).
type module = testmodule.Module

const testGroup = testmodule.Group

func defaultCR(kind string) map[string]any { return testmodule.DefaultCR(kind) }

// publish pushes a module to the suite's registry and creates its template.
func publish(t *testing.T, m module) {
	t.Helper()
	require.NoError(t, m.Publish(t.Context(), kcp.Client, reg.Host, kcpNamespace))
}

// kymaWithModule publishes m in channel regular and creates Kyma kyma
// listing it.
func kymaWithModule(t *testing.T, kyma string, m module) {
	t.Helper()
	publish(t, m)
	releaseMeta(t, m.Name, map[string]string{"regular": m.Version})
	newKyma(t, kyma, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: m.Name}} })
}

// playModuleOperator makes the module's Deployment available and, with
// withCR, its default CR report state.
func playModuleOperator(t *testing.T, ns, name, state string, withCR bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		return testmodule.MarkAvailable(t.Context(), runtimeEnv.Client, ns, name+"-operator") == nil
	}, timeout, tick, "the Deployment of %s appears in %s", name, ns)
	if withCR {
		require.Eventually(t, func() bool {
			return testmodule.SetCRState(t.Context(), runtimeEnv.Client, ns, name, state) == nil
		}, timeout, tick, "the default CR of %s appears in %s", name, ns)
	}
}
