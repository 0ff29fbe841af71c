package contentpolicy_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
)

func crd(group, kind string) *unstructured.Unstructured {
	return object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "xs."+group, map[string]any{
		"spec": map[string]any{"group": group, "names": map[string]any{"kind": kind, "plural": "xs"}, "scope": "Namespaced"},
	})
}

func rule(groups, resources, verbs []any) map[string]any {
	return map[string]any{"apiGroups": groups, "resources": resources, "verbs": verbs}
}

func role(kind, name string, rules ...map[string]any) *unstructured.Unstructured {
	list := make([]any, len(rules))
	for i, r := range rules {
		list[i] = r
	}
	return object("rbac.authorization.k8s.io/v1", kind, name, map[string]any{"rules": list})
}

func hook(kind, name string, groups, resources []any, extra map[string]any) *unstructured.Unstructured {
	w := map[string]any{"name": "a.keda.sh", "clientConfig": service,
		"rules": []any{map[string]any{"apiGroups": groups, "apiVersions": []any{"*"}, "operations": []any{"CREATE"}, "resources": resources}}}
	for k, v := range extra {
		w[k] = v
	}
	return object("admissionregistration.k8s.io/v1", kind, name, map[string]any{"webhooks": []any{w}})
}

var (
	all      = []any{"*"}
	core     = []any{""}
	reads    = []any{"get", "list", "watch"}
	kedaCRD  = crd("keda.sh", "ScaledObject")
	wildRole = role("ClusterRole", "keda-operator", rule(core, all, all))
)

// TestWildcardRBACAndBroadWebhooks runs the default rules over module keda,
// whose CRD is in keda.sh, for a module that is not privileged and one
// that is.
func TestWildcardRBACAndBroadWebhooks(t *testing.T) {
	aggregating := role("ClusterRole", "keda-aggregated")
	aggregating.Object["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{map[string]any{}}}
	emptyAggregation := role("ClusterRole", "keda-view", rule([]any{"keda.sh"}, []any{"scaledobjects"}, reads))
	emptyAggregation.Object["aggregationRule"] = map[string]any{"clusterRoleSelectors": []any{}}
	tests := []struct {
		name string
		objs []*unstructured.Unstructured
		// deny are the denied objects with a part of why; none: allowed.
		deny, denyPrivileged map[string]string
	}{
		{name: "every verb in every group", objs: u(role("ClusterRole", "keda", rule(all, all, all))), deny: map[string]string{"ClusterRole keda": "rule 0 grants every verb in every API group"}},
		{name: "every verb on chosen resources of every group", objs: u(role("ClusterRole", "keda", rule(all, []any{"secrets"}, all))), deny: map[string]string{"ClusterRole keda": "every verb in every API group"}},
		{name: "every verb on every core resource", objs: u(wildRole), deny: map[string]string{"ClusterRole keda-operator": "every resource of the core API group"}},
		{name: "every verb on every resource of the module's group", objs: u(role("ClusterRole", "keda", rule([]any{"keda.sh"}, all, all)))},
		{name: "the module's group and apps", objs: u(role("ClusterRole", "keda", rule(reads, reads, reads), rule([]any{"keda.sh", "apps"}, all, all))), deny: map[string]string{"ClusterRole keda": "rule 1 grants every verb on every resource of the API group apps"}},
		{name: "a CRD in a Kubernetes group does not make it the module's", objs: u(crd("rbac.authorization.k8s.io", "Grant"), role("ClusterRole", "keda", rule([]any{"rbac.authorization.k8s.io"}, all, all))), deny: map[string]string{"ClusterRole keda": "the API group rbac.authorization.k8s.io"}},
		{name: "reading every resource", objs: u(role("ClusterRole", "keda", rule(all, all, reads)))},
		{name: "every verb on Secrets", objs: u(role("ClusterRole", "keda", rule(core, []any{"secrets"}, all)))},
		{name: "a selector that matches every ClusterRole", objs: u(aggregating), deny: map[string]string{"ClusterRole keda-aggregated": "aggregates the rules"}},
		{name: "an aggregationRule without selectors", objs: u(emptyAggregation)},
		{name: "a namespaced wildcard Role", objs: u(role("Role", "keda", rule(all, all, all)))},
		{name: "a binding of the module's wildcard role", objs: u(wildRole, binding("ClusterRoleBinding", "keda", "ClusterRole", "keda-operator")),
			deny: map[string]string{"ClusterRole keda-operator": "every resource of the core API group", "ClusterRoleBinding keda": "its roleRef, the module's ClusterRole keda-operator, grants a wildcard: rule 0"}},
		{name: "a binding of cluster-admin stays denied when privileged", objs: u(binding("ClusterRoleBinding", "keda", "ClusterRole", "cluster-admin")), deny: map[string]string{"ClusterRoleBinding keda": "cluster-admin"}, denyPrivileged: map[string]string{"ClusterRoleBinding keda": ""}},
		{name: "a webhook on every resource", objs: u(hook("ValidatingWebhookConfiguration", "keda-admission", all, all, nil)), deny: map[string]string{"ValidatingWebhookConfiguration keda-admission": "webhook 0 sees every resource of every API group"}},
		{name: "a webhook on every resource and subresource of apps", objs: u(hook("MutatingWebhookConfiguration", "keda-admission", []any{"apps"}, []any{"*/*"}, nil)), deny: map[string]string{"MutatingWebhookConfiguration keda-admission": "every resource of the API group apps"}},
		{name: "a webhook on Secrets", objs: u(hook("ValidatingWebhookConfiguration", "keda-admission", core, []any{"secrets"}, nil)), deny: map[string]string{"ValidatingWebhookConfiguration keda-admission": "webhook 0 sees every Secret"}},
		{name: "a webhook on Secrets in one namespace is still broad", objs: u(hook("MutatingWebhookConfiguration", "keda-admission", all, []any{"secrets"},
			map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "keda"}}})), deny: map[string]string{"MutatingWebhookConfiguration keda-admission": "every Secret"}},
		{name: "a webhook on the module's every resource", objs: u(hook("ValidatingWebhookConfiguration", "keda-admission", []any{"keda.sh"}, all, nil))},
		{name: "a webhook on Deployments", objs: u(hook("MutatingWebhookConfiguration", "keda-admission", []any{"apps"}, []any{"deployments"}, nil))},
		{name: "a foreign webhook stays denied when privileged", objs: u(hook("ValidatingWebhookConfiguration", "istio", []any{"keda.sh"}, all, nil)), deny: map[string]string{"ValidatingWebhookConfiguration istio": "does not start with the module name"}, denyPrivileged: map[string]string{"ValidatingWebhookConfiguration istio": ""}},
	}
	policy, err := contentpolicy.Parse(contentpolicy.Defaults())
	require.NoError(t, err)
	privileged := policy.WithPrivileged([]string{"other", " keda "})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := append(u(kedaCRD, object("v1", "ConfigMap", "keda", nil)), tc.objs...)
			assertDenies(t, policy.Check("keda", objs), tc.deny)
			assertDenies(t, privileged.Check("keda", objs), tc.denyPrivileged)
		})
	}
}

// The scope of a webhook rule decides whether it can match Secrets.
func TestClusterScopedWebhookRuleDoesNotSeeSecrets(t *testing.T) {
	policy, err := contentpolicy.Parse([]string{"ValidatingWebhookConfiguration:broad"})
	require.NoError(t, err)
	h := hook("ValidatingWebhookConfiguration", "keda-admission", core, []any{"secrets"}, nil)
	rules := h.Object["webhooks"].([]any)[0].(map[string]any)["rules"].([]any)
	rules[0].(map[string]any)["scope"] = "Cluster"
	assert.NoError(t, policy.Check("keda", u(h)))
	rules[0].(map[string]any)["scope"] = "*"
	assert.Error(t, policy.Check("keda", u(h)))
}

func TestRoleBindingOfTheModulesRole(t *testing.T) {
	policy, err := contentpolicy.Parse([]string{"RoleBinding:wildcard"})
	require.NoError(t, err)
	nsRole := role("Role", "keda", rule(all, all, all))
	nsRole.SetNamespace("keda")
	bound := binding("RoleBinding", "keda", "Role", "keda")
	bound.SetNamespace("keda")
	elsewhere := binding("RoleBinding", "keda", "Role", "keda")
	elsewhere.SetNamespace("other")
	assertDenies(t, policy.Check("keda", u(nsRole, bound)), map[string]string{"RoleBinding keda/keda": "the module's Role keda"})
	assert.NoError(t, policy.Check("keda", u(nsRole, elsewhere)), "a Role of that name in another namespace is not the module's")
	assert.NoError(t, policy.WithPrivileged([]string{"keda"}).Check("keda", u(nsRole, bound)))
}

func u(objs ...*unstructured.Unstructured) []*unstructured.Unstructured { return objs }

// assertDenies checks that err denies exactly the objects of deny (none:
// err is nil), each for a reason containing its value.
func assertDenies(t *testing.T, err error, deny map[string]string) {
	t.Helper()
	if len(deny) == 0 {
		assert.NoError(t, err)
		return
	}
	var denied *contentpolicy.DeniedError
	require.True(t, errors.As(err, &denied), "a DeniedError: %v", err)
	got := map[string]string{}
	for _, v := range denied.Violations {
		got[v.Object] = v.Why
	}
	require.Len(t, got, len(deny), "%v", err)
	for obj, why := range deny {
		assert.Contains(t, got[obj], why, "why %s is denied", obj)
	}
}
