package suite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

func sampleCR(t *testing.T, rt *harness.Runtime) (*unstructured.Unstructured, error) {
	t.Helper()
	cr := &unstructured.Unstructured{}
	cr.SetAPIVersion("sample.kyma-project.io/v1alpha1")
	cr.SetKind("Sample")
	return cr, rt.Client.Get(t.Context(), client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: "default"}, cr)
}

func TestAKymaWithAModuleBecomesReady(t *testing.T) {
	rt := runtime(0)
	step(t, "Given a runtime and the sample module published in channel regular")
	step(t, "When its Kyma lists the module")
	require.NoError(t, h.CreateKyma(t.Context(), rt, "regular", harness.SampleModule))

	step(t, "Then the Kyma becomes Ready, with the agent installed")
	k := eventuallyKyma(t, rt, "Ready with the agent", func(k *v1beta2.Kyma) bool { return ready(k) && pushReady(k) })
	require.Len(t, k.Status.Modules, 1)
	require.Equal(t, "1.0.0", k.Status.Modules[0].Version)

	step(t, "And the module's resources exist in the runtime, its CR reported Ready by the module's operator")
	dep := &appsv1.Deployment{}
	require.NoError(t, rt.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: harness.SampleDeployment}, dep))
	require.Eventually(t, func() bool {
		cr, err := sampleCR(t, rt)
		state, _, _ := unstructured.NestedString(cr.Object, "status", "state")
		return err == nil && state == "Ready"
	}, timeout, tick)
	_ = time.Second
}
