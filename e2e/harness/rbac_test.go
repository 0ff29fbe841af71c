package harness

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The runtime chart renders a ServiceAccount bound to its ClusterRole, and
// the harness's values reach the module rules: the sample module's kinds,
// its API group and its RBAC (a ClusterRole and binding for its operator).
func TestRuntimeChartRendersTheHarnessRole(t *testing.T) {
	role := renderRuntimeRole(t, runtimeChartValues())
	var groups, resources []string
	for _, r := range role.Rules {
		groups = append(groups, r.APIGroups...)
		resources = append(resources, r.Resources...)
	}
	assert.Contains(t, groups, SampleAPIGroup)
	assert.Contains(t, resources, "serviceaccounts")
	assert.Contains(t, resources, "clusterrolebindings")
}

// extraRules land in the ClusterRole as given, and moduleRBAC's escalate
// and bind are on by default.
func TestRuntimeChartTakesExtraRules(t *testing.T) {
	hpa := rbacv1.PolicyRule{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: []string{"get"}}
	role := renderRuntimeRole(t, map[string]any{"extraRules": []any{map[string]any{
		"apiGroups": []any{"autoscaling"}, "resources": []any{"horizontalpodautoscalers"}, "verbs": []any{"get"}}}})
	assert.Contains(t, role.Rules, hpa)
	assert.Contains(t, role.Rules, rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"},
		Resources: []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"},
		Verbs:     []string{"get", "list", "create", "patch", "delete", "escalate", "bind"}})
}

// renderRuntimeRole renders the runtime chart, checks that it holds a
// ServiceAccount bound to one ClusterRole, and returns the ClusterRole.
func renderRuntimeRole(t *testing.T, values map[string]any) rbacv1.ClusterRole {
	t.Helper()
	objs, err := RenderChart(filepath.Join(RepoRoot(), "charts", "kcp-operator-runtime"), runtimeRelease,
		RuntimeAccessNamespace, values)
	require.NoError(t, err)
	kinds := map[string]int{}
	var role rbacv1.ClusterRole
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "ClusterRole" {
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role))
		}
	}
	assert.Equal(t, map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1}, kinds)
	return role
}

// The kcp-operator chart renders, with the harness's values, the
// ServiceAccount and a Role for the watched namespace.
func TestOperatorChartRendersRBACForTheHarness(t *testing.T) {
	objs, err := RenderChart(filepath.Join(RepoRoot(), "charts", "kcp-operator"), operatorRelease, Namespace,
		operatorChartValues(false))
	require.NoError(t, err)
	found := map[string]bool{}
	for _, o := range objs {
		found[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = true
	}
	for _, want := range []string{"ServiceAccount kcp-system/kcp-operator", "Role kcp-system/kcp-operator",
		"RoleBinding kcp-system/kcp-operator"} {
		assert.True(t, found[want], "%s in %v", want, found)
	}
}

// The runtime chart passes helm lint --strict with its defaults, the
// harness's values and extra rules.
func TestRuntimeChartLintsStrict(t *testing.T) {
	extra := map[string]any{"extraRules": []any{map[string]any{
		"apiGroups": []any{"autoscaling"}, "resources": []any{"horizontalpodautoscalers"}, "verbs": []any{"get"}}}}
	for name, values := range map[string]map[string]any{"defaults": {}, "harness": runtimeChartValues(), "extraRules": extra} {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = RuntimeAccessNamespace
			lint.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
			res := lint.Run([]string{filepath.Join(RepoRoot(), "charts", "kcp-operator-runtime")}, values)
			assert.Equal(t, 1, res.TotalChartsLinted)
			assert.Empty(t, res.Errors)
			for _, m := range res.Messages {
				t.Log(m.Error())
			}
		})
	}
}
