package kyma_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	kymactrl "github.com/lifecycle-manager/kcp-operator/internal/controller/kyma"
)

// publicTemplate is a ModuleTemplate exactly as the public modulectl
// writes it: its fields in its order, the module-name label, the
// is-cluster-scoped annotation, no namespace, and descriptor: {} — the
// component version is in the registry only.
const publicTemplate = `apiVersion: operator.kyma-project.io/v1beta2
kind: ModuleTemplate
metadata:
  name: %[1]s-%[2]s
  namespace: ""
  labels:
    "operator.kyma-project.io/module-name": "%[1]s"
  annotations:
    "operator.kyma-project.io/is-cluster-scoped": "false"
spec:
  moduleName: %[1]s
  version: %[2]s
  requiresDowntime: false
  info:
    repository: https://github.com/example/%[1]s
    documentation: https://example.com/docs/%[1]s
    icons:
    - name: module-icon
      link: https://example.com/%[1]s.svg
  associatedResources:
  - group: test.lifecycle-manager.io
    version: v1
    kind: %[3]s
  data:
    apiVersion: test.lifecycle-manager.io/v1
    kind: %[3]s
    metadata:
      name: default
    spec:
      replicas: 1
  manager:
    name: %[1]s-operator
    namespace: %[4]s
    group: apps
    version: v1
    kind: Deployment
  descriptor: {}
  resources:
  - name: rawManifest
    link: https://github.com/example/%[1]s/releases/download/%[2]s/manifest.yaml
`

// applyPublicTemplate creates the template of module m at version in
// kcp-system, as kubectl apply of modulectl's file does.
func applyPublicTemplate(t *testing.T, module, version, runtimeNamespace string) {
	t.Helper()
	tmpl := &v1beta2.ModuleTemplate{}
	doc := fmt.Sprintf(publicTemplate, module, version, testmoduleKind(module), runtimeNamespace)
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), tmpl), "every field modulectl writes is in the API")
	tmpl.Namespace = kcpNamespace
	require.NoError(t, kcp.Client.Create(t.Context(), tmpl))
}

func testmoduleKind(module string) string { return string(module[0]-'a'+'A') + module[1:] }

func descriptorsCondition(k *v1beta2.Kyma) *metav1.Condition {
	return meta.FindStatusCondition(k.Status.Conditions, kymactrl.ConditionModuleDescriptors)
}

func TestPublicModulectlTemplateBecomesReady(t *testing.T) {
	m := module{Name: "pubmod", Version: "1.0.0"}
	_, err := m.Push(t.Context(), reg.Host)
	require.NoError(t, err)
	applyPublicTemplate(t, m.Name, m.Version, "public")
	releaseMeta(t, m.Name, map[string]string{"regular": m.Version}) // spec.ocmComponentName: kyma-project.io/module/pubmod
	newKyma(t, "public", func(k *v1beta2.Kyma) { k.Spec.Modules = []v1beta2.Module{{Name: m.Name}} })

	playModuleOperator(t, "public", m.Name, "Ready", true)
	k := eventuallyKyma(t, "public", "Ready", stateIs(shared.StateReady))
	ms := moduleStatus(k, m.Name)
	require.NotNil(t, ms)
	assert.Equal(t, shared.StateReady, ms.State)
	assert.Equal(t, m.Component(), ms.FQDN, "the FQDN comes from the registry's descriptor")
	c := descriptorsCondition(k)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status, c.Message)
}

func TestMissingComponentOrVersionIsNamed(t *testing.T) {
	pushed := module{Name: "halfway", Version: "1.0.0"}
	_, err := pushed.Push(t.Context(), reg.Host)
	require.NoError(t, err)
	applyPublicTemplate(t, pushed.Name, "1.1.0", "missing") // never pushed as 1.1.0
	releaseMeta(t, pushed.Name, map[string]string{"regular": "1.1.0"})
	applyPublicTemplate(t, "nowhere", "1.0.0", "missing") // never pushed at all
	releaseMeta(t, "nowhere", map[string]string{"regular": "1.0.0"})
	newKyma(t, "missing", func(k *v1beta2.Kyma) {
		k.Spec.Modules = []v1beta2.Module{{Name: pushed.Name}, {Name: "nowhere"}}
	})

	k := eventuallyKyma(t, "missing", "Error with both modules", func(k *v1beta2.Kyma) bool {
		a, b := moduleStatus(k, pushed.Name), moduleStatus(k, "nowhere")
		return k.Status.State == shared.StateError && a != nil && b != nil && a.State == shared.StateError && b.State == shared.StateError
	})
	repo := reg.Host + "/modules/component-descriptors/kyma-project.io/module/"
	assert.Contains(t, moduleStatus(k, pushed.Name).Message,
		"component kyma-project.io/module/halfway has no version 1.1.0 in "+repo+"halfway (it has 1.0.0)")
	assert.Contains(t, moduleStatus(k, "nowhere").Message,
		"the registry has no component kyma-project.io/module/nowhere (repository "+repo+"nowhere)")
	c := descriptorsCondition(k)
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "ComponentVersionNotFound", c.Reason, "the first module's reason")
	assert.Contains(t, c.Message, "(ComponentVersionNotFound)")
	assert.Contains(t, c.Message, "(ComponentNotFound)")
}
