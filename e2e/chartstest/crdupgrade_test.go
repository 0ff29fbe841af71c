package chartstest

import (
	"fmt"
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
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs.one(t, "ClusterRole", "kcp-operator-crd-upgrade").Object, &role))
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

	off := set(baseValues(), "crdUpgrade.enabled", false)
	_, err := render(off, "lifecycle-manager")
	require.ErrorContains(t, err, "conversionWebhook.enabled needs crdUpgrade.enabled", "the hook is what points the CRDs at the webhook")
	none := mustRender(t, set(off, "conversionWebhook.enabled", false), "lifecycle-manager")
	assert.Empty(t, none.all("Job"))
	assert.Empty(t, none.all("ClusterRole"))
}

// TestConversionWebhook: the operator serves the webhook behind a Service,
// the hook points the CRDs at that Service, and the operator may get and
// patch exactly the CRDs with more than one version (their caBundle).
func TestConversionWebhook(t *testing.T) {
	objs := mustRender(t, baseValues(), "lifecycle-manager")
	args := objs.args(t)
	assert.Equal(t, ":9443", args["--webhook-bind-address"])
	hook := field(t, objs.one(t, "Job"), "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["args"]
	assert.Contains(t, hook, "--webhook-service="+args["--webhook-service"], "the hook and the operator name the same webhook")
	assert.Equal(t, "lifecycle-manager/kcp-operator-webhook", args["--webhook-service"])

	svc := objs.one(t, "Service", "kcp-operator-webhook")
	assert.Equal(t, `- name: https-webhook
  port: 443
  protocol: TCP
  targetPort: webhook`, toYAML(t, field(t, svc, "spec", "ports")))

	role := rbacv1.ClusterRole{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(objs.one(t, "ClusterRole", "kcp-operator-conversion").Object, &role))
	require.Len(t, role.Rules, 1)
	assert.Equal(t, []string{"get", "patch"}, role.Rules[0].Verbs)
	assert.ElementsMatch(t, []string{"kymas.operator.kyma-project.io", "manifests.operator.kyma-project.io",
		"moduletemplates.operator.kyma-project.io"}, role.Rules[0].ResourceNames, "the CRDs that have v1beta1")
	binding := objs.one(t, "ClusterRoleBinding", "kcp-operator-conversion")
	assert.Equal(t, "kcp-operator", field(t, binding, "subjects").([]any)[0].(map[string]any)["name"])

	off := mustRender(t, set(baseValues(), "conversionWebhook.enabled", false), "lifecycle-manager")
	assert.NotContains(t, off.args(t), "--webhook-bind-address")
	assert.NotContains(t, off.kinds(), "Service lifecycle-manager/kcp-operator-webhook")
	assert.NotContains(t, off.kinds(), "ClusterRole /kcp-operator-conversion")
	offHook := field(t, off.one(t, "Job"), "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["args"]
	assert.NotContains(t, fmt.Sprint(offHook), "--webhook", "without the webhook the hook leaves v1beta1 unserved")
}
