package kyma_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// publishWith publishes m in channel regular with its template changed by
// mutate, as a module team writes spec.manager or spec.customStateCheck.
func publishWith(t *testing.T, m module, mutate func(*v1beta2.ModuleTemplateSpec)) {
	t.Helper()
	publish(t, m)
	updateTemplate(t, m.Name+"-"+m.Version, mutate)
	releaseMeta(t, m.Name, map[string]string{"regular": m.Version})
}

// updateTemplate changes a template, retrying on conflicts.
func updateTemplate(t *testing.T, name string, mutate func(*v1beta2.ModuleTemplateSpec)) {
	t.Helper()
	require.Eventually(t, func() bool {
		tmpl := &v1beta2.ModuleTemplate{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: kcpNamespace, Name: name}, tmpl) != nil {
			return false
		}
		mutate(&tmpl.Spec)
		return kcp.Client.Update(t.Context(), tmpl) == nil
	}, timeout, tick, "updating template %s", name)
}

// sidecar is a second Deployment of a module, which no kubelet ever makes
// available in this suite.
func sidecar(module string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s-sidecar}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s-sidecar}}
  template:
    metadata: {labels: {app: %[1]s-sidecar}}
    spec: {containers: [{name: sidecar, image: "registry.example.com/kyma/sidecar:1"}]}
`, module)
}

func deploymentManager(name string) *v1beta2.Manager {
	return &v1beta2.Manager{GroupVersionKind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Name: name}
}

func TestTheManagerDecidesWhenTheModulesWorkloadsAreReady(t *testing.T) {
	publishWith(t, module{Name: "mango", Version: "1.0.0", Extra: []string{sidecar("mango")}}, func(s *v1beta2.ModuleTemplateSpec) {
		s.Manager = deploymentManager("mango-operator")
	})
	newKyma(t, "manager-set", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "mango"}} })
	kymaWithModule(t, "manager-unset", module{Name: "melon", Version: "1.0.0", Extra: []string{sidecar("melon")}})

	mf := eventuallyManifest(t, "manager-set-mango", "waiting for its manager", func(mf *v1beta2.Manifest) bool {
		return mf.Status.State == shared.StateProcessing && appliedAll(4)(mf)
	})
	require.NotNil(t, mf.Spec.Manager, "the template's manager is carried to the Manifest")
	assert.Equal(t, "mango-operator", mf.Spec.Manager.Name)
	playModuleOperator(t, "manager-set", "mango", "", false)
	playModuleOperator(t, "manager-unset", "melon", "", false)

	mf = eventuallyManifest(t, "manager-set-mango", "Ready", manifestState(shared.StateReady))
	assert.Contains(t, mf.Status.LastOperation.Operation, "manager Deployment manager-set/mango-operator is rolled out",
		"the manager is ready although the sidecar is not")
	mf = eventuallyManifest(t, "manager-unset-melon", "waiting for the sidecar only", func(mf *v1beta2.Manifest) bool {
		op := mf.Status.LastOperation.Operation
		return mf.Status.State == shared.StateProcessing && strings.Contains(op, "melon-sidecar") && !strings.Contains(op, "melon-operator")
	})
	assert.Nil(t, mf.Spec.Manager)

	what := "a manager that does not exist is waited for, and named"
	updateTemplate(t, "mango-1.0.0", func(s *v1beta2.ModuleTemplateSpec) { s.Manager = deploymentManager("mango-controller") })
	mf = eventuallyManifest(t, "manager-set-mango", what, func(mf *v1beta2.Manifest) bool {
		return mf.Status.State == shared.StateProcessing &&
			strings.Contains(mf.Status.LastOperation.Operation, "manager Deployment manager-set/mango-controller: it does not exist")
	})
	assert.False(t, meta.IsStatusConditionTrue(mf.Status.Conditions, v1beta2.ConditionInstallation), what)
}

// setCRField plays a module operator that reports in a field of its own.
func setCRField(t *testing.T, ns, kind, value string, field ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		cr := &unstructured.Unstructured{}
		cr.SetAPIVersion(testGroup + "/v1")
		cr.SetKind(kind)
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "default"}, cr) != nil {
			return false
		}
		if err := unstructured.SetNestedField(cr.Object, value, field...); err != nil {
			return false
		}
		return runtimeEnv.Client.Status().Update(t.Context(), cr) == nil
	}, timeout, tick, "the default %s appears in %s", kind, ns)
}

func healthChecks() []*v1beta2.CustomStateCheck {
	return []*v1beta2.CustomStateCheck{
		{JSONPath: "status.health", Value: "green", MappedState: shared.StateReady},
		{JSONPath: "status.health", Value: "red", MappedState: shared.StateError},
	}
}

func TestCustomStateCheckMapsTheModuleCR(t *testing.T) {
	publishWith(t, module{Name: "olive", Version: "1.0.0", Data: defaultCR("Olive")}, func(s *v1beta2.ModuleTemplateSpec) {
		s.CustomStateCheck = healthChecks()
	})
	newKyma(t, "check-set", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: "olive"}} })
	kymaWithModule(t, "check-unset", module{Name: "peach", Version: "1.0.0", Data: defaultCR("Peach")})
	playModuleOperator(t, "check-set", "olive", "", false)
	playModuleOperator(t, "check-unset", "peach", "", false)

	setCRField(t, "check-set", "Olive", "green", "status", "health")
	setCRField(t, "check-unset", "Peach", "green", "status", "health")
	nudgeManifest(t, "check-set-olive")
	mf := eventuallyManifest(t, "check-set-olive", "Ready by its health", manifestState(shared.StateReady))
	assert.Contains(t, mf.Status.LastOperation.Operation, `status.health is "green"`)
	assert.Len(t, mf.Spec.CustomStateCheck, 2, "the template's checks are carried to the Manifest")
	nudgeManifest(t, "check-unset-peach")
	eventuallyManifest(t, "check-unset-peach", "waiting for status.state", func(mf *v1beta2.Manifest) bool {
		return mf.Status.State == shared.StateProcessing && strings.Contains(mf.Status.LastOperation.Operation, "has no status.state yet")
	})

	setCRField(t, "check-set", "Olive", "red", "status", "health")
	nudgeManifest(t, "check-set-olive")
	mf = eventuallyManifest(t, "check-set-olive", "Error by its health", manifestState(shared.StateError))
	assert.Contains(t, mf.Status.LastOperation.Operation, `Olive check-set/default reports Error (status.health is "red")`)
	k := eventuallyKyma(t, "check-set", "Error", stateIs(shared.StateError))
	assert.Contains(t, moduleStatus(k, "olive").Message, `status.health is "red"`, "the Kyma tells why")

	updateTemplate(t, "olive-1.0.0", func(s *v1beta2.ModuleTemplateSpec) {
		s.CustomStateCheck = []*v1beta2.CustomStateCheck{{JSONPath: "status.[health", Value: "green", MappedState: shared.StateReady}}
	})
	mf = eventuallyManifest(t, "check-set-olive", "Error naming the bad path", func(mf *v1beta2.Manifest) bool {
		return mf.Status.State == shared.StateError && strings.Contains(mf.Status.LastOperation.Operation, `jsonPath "status.[health" does not parse`)
	})
	assert.Equal(t, "StateError", meta.FindStatusCondition(mf.Status.Conditions, v1beta2.ConditionModuleCR).Reason)
}
