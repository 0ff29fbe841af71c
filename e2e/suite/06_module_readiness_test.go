package suite

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

// checkedModule is the sample module published once more under another
// name, with a template that says how the module reports: by its manager
// Deployment, and by its CR's status.health instead of status.state. As
// modulectl publishes it, the template has no descriptor: its release meta
// names the sample's OCM component, which the registry holds.
const checkedModule = "checked-sample"

func publishCheckedModule(t *testing.T) {
	t.Helper()
	sampleMeta := &v1beta2.ModuleReleaseMeta{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: harness.SampleModule}, sampleMeta))
	meta := &v1beta2.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Name: checkedModule, Namespace: harness.Namespace},
		Spec: v1beta2.ModuleReleaseMetaSpec{
			ModuleName: checkedModule, OcmComponentName: sampleMeta.Spec.OcmComponentName,
			Channels: []v1beta2.ChannelVersionAssignment{{Channel: "regular", Version: "1.0.0"}},
		},
	}
	if err := h.KCP.Client.Create(t.Context(), meta); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	sample := &v1beta2.ModuleTemplate{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: harness.SampleModule + "-1.0.0"}, sample))
	tmpl := &v1beta2.ModuleTemplate{Spec: *sample.Spec.DeepCopy()}
	tmpl.Name, tmpl.Namespace = checkedModule+"-1.0.0", harness.Namespace
	tmpl.Spec.ModuleName, tmpl.Spec.Channel = checkedModule, "regular"
	tmpl.Spec.Manager = &v1beta2.Manager{Name: harness.SampleDeployment, Namespace: "kyma-system",
		GroupVersionKind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}
	tmpl.Spec.CustomStateCheck = []*v1beta2.CustomStateCheck{
		{JSONPath: "status.health", Value: "green", MappedState: shared.StateReady},
		{JSONPath: "status.health", Value: "red", MappedState: shared.StateError},
	}
	err := h.KCP.Client.Create(t.Context(), tmpl)
	if apierrors.IsAlreadyExists(err) {
		return
	}
	require.NoError(t, err)
}

// setSampleFail sets spec.fail of the module's default CR, as a runtime
// admin would, and waits until the module's operator reports status.health.
// The operator's status writes are not pushed (the drift watch forwards
// spec edits, not status updates): the Manifest reads the CR again when
// the module next changes, here the admin's next edit of the CR's spec.
func setSampleFail(t *testing.T, rt *harness.Runtime, fail bool, health string) {
	t.Helper()
	editSample(t, rt, func(cr *unstructured.Unstructured) error {
		return unstructured.SetNestedField(cr.Object, fail, "spec", "fail")
	})
	require.Eventually(t, func() bool {
		cr, err := sampleCR(t, rt)
		got, _, _ := unstructured.NestedString(cr.Object, "status", "health")
		return err == nil && got == health
	}, timeout, tick, "the sample operator reports status.health %s", health)
	editSample(t, rt, func(cr *unstructured.Unstructured) error {
		return unstructured.SetNestedField(cr.Object, "hello, status.health "+health, "spec", "greeting")
	})
}

func editSample(t *testing.T, rt *harness.Runtime, edit func(*unstructured.Unstructured) error) {
	t.Helper()
	require.Eventually(t, func() bool {
		cr, err := sampleCR(t, rt)
		if err != nil || edit(cr) != nil {
			return false
		}
		return rt.Client.Update(t.Context(), cr) == nil
	}, timeout, tick)
}

func checkedStatus(k *v1beta2.Kyma) *v1beta2.ModuleStatus {
	for i := range k.Status.Modules {
		if k.Status.Modules[i].Name == checkedModule {
			return &k.Status.Modules[i]
		}
	}
	return nil
}

func checkedIs(state shared.State, msg string) func(*v1beta2.Kyma) bool {
	return func(k *v1beta2.Kyma) bool {
		m := checkedStatus(k)
		return m != nil && m.State == state && (msg == "" || strings.Contains(m.Message, msg))
	}
}

func TestAModuleReportsAsItsTemplateSays(t *testing.T) {
	rt := runtime(1)
	withoutModules(t, rt)
	step(t, "Given a module whose template names its manager Deployment and maps its CR's status.health to states")
	publishCheckedModule(t)

	step(t, "When the runtime admin adds it, it is Ready by its manager and status.health green")
	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: checkedModule}} })
	eventuallyKyma(t, rt, "the module Ready", func(k *v1beta2.Kyma) bool { return ready(k) && checkedIs(shared.StateReady, "")(k) })
	mf := &v1beta2.Manifest{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName + "-" + checkedModule}, mf))
	require.NotNil(t, mf.Spec.Manager)
	assert.Equal(t, harness.SampleDeployment, mf.Spec.Manager.Name)
	assert.Contains(t, mf.Status.LastOperation.Operation, `status.health is "green"`)

	step(t, "When the module's operator reports status.health red, the module is Error as the check maps it (status.state says Warning)")
	setSampleFail(t, rt, true, "red")
	eventuallyKyma(t, rt, "the module in Error", checkedIs(shared.StateError, `status.health is "red"`))
	setSampleFail(t, rt, false, "green")
	eventuallyKyma(t, rt, "the module Ready again", checkedIs(shared.StateReady, ""))

	step(t, "When the template names a manager the module does not have, the module waits for it, and says so")
	tmpl := &v1beta2.ModuleTemplate{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: checkedModule + "-1.0.0"}, tmpl))
	tmpl.Spec.Manager.Name = "sample-controller"
	require.NoError(t, h.KCP.Client.Update(t.Context(), tmpl))
	eventuallyKyma(t, rt, "the module Processing", checkedIs(shared.StateProcessing, "kyma-system/sample-controller: it does not exist"))

	step(t, "And once the template names the manager again, the module is Ready")
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKeyFromObject(tmpl), tmpl))
	tmpl.Spec.Manager.Name = harness.SampleDeployment
	require.NoError(t, h.KCP.Client.Update(t.Context(), tmpl))
	eventuallyKyma(t, rt, "the module Ready", func(k *v1beta2.Kyma) bool { return ready(k) && checkedIs(shared.StateReady, "")(k) })

	updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	eventuallyKyma(t, rt, "without modules", func(k *v1beta2.Kyma) bool { return ready(k) && len(k.Status.Modules) == 0 })
	require.NoError(t, client.IgnoreNotFound(h.KCP.Client.Delete(t.Context(), tmpl)))
	require.NoError(t, client.IgnoreNotFound(h.KCP.Client.Delete(t.Context(),
		&v1beta2.ModuleReleaseMeta{ObjectMeta: metav1.ObjectMeta{Name: checkedModule, Namespace: harness.Namespace}})))
}
