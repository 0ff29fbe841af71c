package chartstest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The CRD upgrade runs as a hook before install and upgrade, with the
// operator's image, and may touch the chart's own CRDs and objects only.
func TestCRDUpgradeHook(t *testing.T) {
	objs := mustRender(t, baseValues(), "lifecycle-manager")
	job := objs.one(t, "Job")
	assert.Equal(t, "pre-install,pre-upgrade", job.GetAnnotations()["helm.sh/hook"])
	containers := field(t, job, "spec", "template", "spec", "containers").([]any)
	require.Len(t, containers, 1)
	c := containers[0].(map[string]any)
	assert.Contains(t, c["args"], "--upgrade-crds")
	assert.Equal(t, field(t, objs.one(t, "Deployment"), "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["image"],
		c["image"], "the operator's image")

	role := rbacv1.ClusterRole{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs.one(t, "ClusterRole").Object, &role))
	var names []string
	for _, r := range role.Rules {
		if len(r.ResourceNames) > 0 {
			names = r.ResourceNames
		}
		if strings.Contains(strings.Join(r.APIGroups, ","), "apiextensions") && len(r.ResourceNames) == 0 {
			assert.Equal(t, []string{"create"}, r.Verbs, "only create is unbounded by name")
		}
	}
	assert.ElementsMatch(t, []string{
		"kymas.operator.kyma-project.io", "manifests.operator.kyma-project.io", "moduletemplates.operator.kyma-project.io",
		"modulereleasemetas.operator.kyma-project.io", "watchers.operator.kyma-project.io",
	}, names, "every CRD of crds/, by name")

	off := mustRender(t, set(baseValues(), "crdUpgrade.enabled", false), "lifecycle-manager")
	assert.Empty(t, off.all("Job"))
	assert.Empty(t, off.all("ClusterRole"))
}
