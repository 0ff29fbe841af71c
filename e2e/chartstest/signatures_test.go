package chartstest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestModuleSignatureValues(t *testing.T) {
	args := mustRender(t, baseValues(), "lifecycle-manager").args(t)
	assert.Equal(t, "warn", args["--module-signature-policy"])
	assert.NotContains(t, args, "--module-trust-secret", "no trust Secret: nothing is checked")

	v := set(set(baseValues(), "moduleSignatures.policy", "enforce"), "moduleSignatures.trustSecret", "module-trust")
	objs := mustRender(t, v, "lifecycle-manager")
	args = objs.args(t)
	assert.Equal(t, "enforce", args["--module-signature-policy"])
	assert.Equal(t, "lifecycle-manager/module-trust", args["--module-trust-secret"], "a bare name is in the release namespace")
	assert.Contains(t, objs.kinds(), "Role lifecycle-manager/kcp-operator", "the trust Secret is read in its namespace")

	other := mustRender(t, set(baseValues(), "moduleSignatures.trustSecret", "signing/anchors"), "lifecycle-manager")
	assert.Equal(t, "signing/anchors", other.args(t)["--module-trust-secret"])
	var role *unstructured.Unstructured
	for _, r := range other.all("Role") {
		if r.GetNamespace() == "signing" {
			role = r
		}
	}
	require.NotNil(t, role, "a Role in the trust Secret's namespace")
	assert.Equal(t, "trust", role.GetAnnotations()["operator.kyma-project.io/rbac-purposes"])
	assert.Equal(t, `- apiGroups:
  - ""
  resources:
  - secrets
  verbs:
  - get`, toYAML(t, field(t, role, "rules")))

	for name, values := range map[string]map[string]any{
		"enforce without anchors": set(baseValues(), "moduleSignatures.policy", "enforce"),
		"an unknown policy":       set(baseValues(), "moduleSignatures.policy", "strict"),
		"a Secret path":           set(baseValues(), "moduleSignatures.trustSecret", "a/b/c"),
	} {
		_, err := render(values, "lifecycle-manager")
		assert.Error(t, err, name)
	}
}
