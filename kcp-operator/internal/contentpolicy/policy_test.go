package contentpolicy_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/contentpolicy"
)

func object(apiVersion, kind, name string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		o.Object[k] = v
	}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetName(name)
	return o
}

func binding(kind, name, roleKind, role string) *unstructured.Unstructured {
	return object("rbac.authorization.k8s.io/v1", kind, name, map[string]any{
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": role},
	})
}

func webhook(kind, name string, clientConfig map[string]any) *unstructured.Unstructured {
	return object("admissionregistration.k8s.io/v1", kind, name, map[string]any{
		"webhooks": []any{map[string]any{"name": "a.example.com", "clientConfig": clientConfig}},
	})
}

var (
	service = map[string]any{"service": map[string]any{"name": "keda-webhook", "namespace": "kyma-system"}}
	url     = map[string]any{"url": "https://collector.example.com/reviews"}
)

func TestDefaultsDeny(t *testing.T) {
	policy, err := contentpolicy.Parse(contentpolicy.Defaults())
	require.NoError(t, err)
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		wantWhy string // empty: allowed
	}{
		{"ClusterRoleBinding to cluster-admin", binding("ClusterRoleBinding", "keda-admin", "ClusterRole", "cluster-admin"), "roleRef is the ClusterRole cluster-admin"},
		{"RoleBinding to cluster-admin", binding("RoleBinding", "keda-admin", "ClusterRole", "cluster-admin"), "roleRef is the ClusterRole cluster-admin"},
		{"ClusterRoleBinding to the module's role", binding("ClusterRoleBinding", "keda", "ClusterRole", "keda-operator"), ""},
		{"binding to a Role named cluster-admin", binding("RoleBinding", "keda", "Role", "cluster-admin"), ""},
		{"the module's validating webhook", webhook("ValidatingWebhookConfiguration", "keda-admission", service), ""},
		{"the module's mutating webhook, dotted", webhook("MutatingWebhookConfiguration", "keda.kyma-project.io", service), ""},
		{"a webhook named for another module", webhook("ValidatingWebhookConfiguration", "istio-validator", service), `name does not start with the module name "keda"`},
		{"a webhook named like a longer module", webhook("MutatingWebhookConfiguration", "kedaextra", service), "name does not start"},
		{"the module's webhook calling a URL", webhook("ValidatingWebhookConfiguration", "keda-admission", url), "webhook 0 calls a URL"},
		{"a ConfigMap", object("v1", "ConfigMap", "keda", nil), ""},
		{"a ClusterRoleBinding kind of another group", object("example.com/v1", "ClusterRoleBinding", "x", map[string]any{
			"roleRef": map[string]any{"kind": "ClusterRole", "name": "cluster-admin"}}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := policy.Check("keda", []*unstructured.Unstructured{object("v1", "ConfigMap", "first", nil), tc.obj})
			if tc.wantWhy == "" {
				assert.NoError(t, err)
				return
			}
			var denied *contentpolicy.DeniedError
			require.True(t, errors.As(err, &denied), "a DeniedError: %v", err)
			require.Len(t, denied.Violations, 1)
			assert.Equal(t, tc.obj.GetKind()+" "+tc.obj.GetName(), denied.Violations[0].Object)
			assert.Contains(t, denied.Violations[0].Why, tc.wantWhy)
			assert.ErrorContains(t, err, "module keda renders content the operator refuses to apply: "+tc.obj.GetKind()+" "+tc.obj.GetName()+" is denied by rule ")
		})
	}
}

func TestRuleSyntax(t *testing.T) {
	tests := []struct {
		spec    string
		want    string // the rule as printed; empty: an error
		matches []*unstructured.Unstructured
		passes  []*unstructured.Unstructured
	}{
		{spec: "Secret", want: "Secret:always",
			matches: []*unstructured.Unstructured{object("v1", "Secret", "s", nil), object("example.com/v1", "Secret", "s", nil)}},
		{spec: "core/Secret", want: "core/Secret:always",
			matches: []*unstructured.Unstructured{object("v1", "Secret", "s", nil)},
			passes:  []*unstructured.Unstructured{object("example.com/v1", "Secret", "s", nil)}},
		{spec: " apiextensions.k8s.io/CustomResourceDefinition ", want: "apiextensions.k8s.io/CustomResourceDefinition:always",
			matches: []*unstructured.Unstructured{object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "a.b.io", nil)}},
		{spec: "ClusterRoleBinding:cluster-admin", want: "ClusterRoleBinding:cluster-admin",
			matches: []*unstructured.Unstructured{binding("ClusterRoleBinding", "x", "ClusterRole", "cluster-admin")},
			passes:  []*unstructured.Unstructured{binding("ClusterRoleBinding", "x", "ClusterRole", "view")}},
		{spec: "rbac.authorization.k8s.io/Role:wildcard", want: "rbac.authorization.k8s.io/Role:wildcard",
			matches: []*unstructured.Unstructured{role("Role", "r", rule(all, all, all))},
			passes:  []*unstructured.Unstructured{role("Role", "r", rule(core, []any{"configmaps"}, all)), role("ClusterRole", "r", rule(all, all, all))}},
		{spec: "MutatingWebhookConfiguration:broad", want: "MutatingWebhookConfiguration:broad",
			matches: []*unstructured.Unstructured{hook("MutatingWebhookConfiguration", "m", core, all, nil)},
			passes:  []*unstructured.Unstructured{hook("MutatingWebhookConfiguration", "m", core, []any{"pods"}, nil)}},
		{spec: "ClusterRoleBinding:root"},
		{spec: "ClusterRole:Wildcard"},
		{spec: "/Secret"},
		{spec: ":always"},
		{spec: "a/b/Secret"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			policy, err := contentpolicy.Parse([]string{tc.spec})
			if tc.want == "" {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Len(t, policy.Rules(), 1)
			assert.Equal(t, tc.want, policy.Rules()[0].String())
			for _, o := range tc.matches {
				assert.Error(t, policy.Check("m", []*unstructured.Unstructured{o}), "%s %s", o.GetAPIVersion(), o.GetKind())
			}
			for _, o := range tc.passes {
				assert.NoError(t, policy.Check("m", []*unstructured.Unstructured{o}), "%s %s", o.GetAPIVersion(), o.GetKind())
			}
		})
	}
}

func TestEmptyPolicyDeniesNothing(t *testing.T) {
	policy, err := contentpolicy.Parse([]string{""})
	require.NoError(t, err)
	assert.NoError(t, policy.Check("m", []*unstructured.Unstructured{binding("ClusterRoleBinding", "x", "ClusterRole", "cluster-admin")}))
	var none *contentpolicy.Policy
	assert.NoError(t, none.Check("m", []*unstructured.Unstructured{binding("ClusterRoleBinding", "x", "ClusterRole", "cluster-admin")}))
}

func TestErrorNamesAtMostFive(t *testing.T) {
	policy, err := contentpolicy.Parse([]string{"Secret"})
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		objs = append(objs, object("v1", "Secret", name, nil))
	}
	err = policy.Check("m", objs)
	assert.ErrorContains(t, err, "Secret e is denied")
	assert.ErrorContains(t, err, "and 2 more")
	assert.NotContains(t, err.Error(), "Secret f")
}
