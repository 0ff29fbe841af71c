package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

func TestWebhooksAreScopedToASharedRuntimeNamespace(t *testing.T) {
	in, err := NewInstaller(Options{Image: "skr-agent:test", KCPAddress: "kcp.example:443", Contract: "v2",
		DriftWatch: true, SecretName: "skr-agent-tls"}, render.New(render.Options{}))
	require.NoError(t, err)
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "kyma-1", Namespace: "kcp-system",
		Labels: map[string]string{shared.RuntimeIDLabel: "runtime-1"}}}
	watchers := []v1beta2.Watcher{{
		ObjectMeta: metav1.ObjectMeta{Name: "klm-watcher"},
		Spec: v1beta2.WatcherSpec{Manager: "lifecycle-manager", Field: v1beta2.FieldSpec,
			ResourceToWatch: v1beta2.WatchableGVR{Group: "operator.kyma-project.io", Version: "v1beta2", Resource: "kymas"}},
	}}
	for _, tc := range []struct {
		namespace string
		scoped    bool
	}{
		{namespace: shared.DefaultRuntimeNamespace, scoped: false},
		{namespace: "runtime-17", scoped: true},
	} {
		t.Run(tc.namespace, func(t *testing.T) {
			// Twice: the second render is a cache hit and must come out the
			// same, so the first must not have changed the cached objects.
			for range 2 {
				objs, err := in.render(t.Context(), kyma, tc.namespace, []byte("-----BEGIN CERTIFICATE-----\n"), watchers)
				require.NoError(t, err)
				hooks := webhooksOf(t, objs)
				require.Len(t, hooks, 2, "the Kyma watch and the drift watch")
				for _, h := range hooks {
					selector, found, err := unstructured.NestedStringMap(h, "namespaceSelector", "matchLabels")
					require.NoError(t, err)
					if tc.scoped {
						assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": tc.namespace}, selector, h["name"])
					} else {
						assert.False(t, found, "an agent in kyma-system watches the whole runtime: %v", h["name"])
					}
				}
			}
		})
	}
}

// TestRemoveKnowsEveryKindTheChartRenders: Remove and the prune of an
// upgrade delete by the kinds listed; a kind the chart renders but the list
// lacks would stay in the runtime after the agent is gone.
func TestRemoveKnowsEveryKindTheChartRenders(t *testing.T) {
	in, err := NewInstaller(Options{Image: "skr-agent:test", KCPAddress: "kcp.example:443", Contract: "v2",
		DriftWatch: true, SecretName: "skr-agent-tls"}, render.New(render.Options{}))
	require.NoError(t, err)
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "kyma-1", Namespace: "kcp-system",
		Labels: map[string]string{shared.RuntimeIDLabel: "runtime-1"}}}
	objs, err := in.render(t.Context(), kyma, "kyma-system", []byte("-----BEGIN CERTIFICATE-----\n"), nil)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, gvk := range kinds {
		listed[gvk.String()] = true
	}
	for _, o := range objs {
		assert.True(t, listed[o.GroupVersionKind().String()], "%s %s is rendered but not in kinds", o.GetKind(), o.GetName())
		assert.Equal(t, Fullname("kyma-system"), o.GetName(), "Remove deletes by the agent's name")
	}
}

func webhooksOf(t *testing.T, objs []*unstructured.Unstructured) []map[string]any {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		hooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
		require.NoError(t, err)
		out := make([]map[string]any, 0, len(hooks))
		for _, h := range hooks {
			out = append(out, h.(map[string]any))
		}
		return out
	}
	t.Fatal("no ValidatingWebhookConfiguration rendered")
	return nil
}

func TestAgentPullsWithTheRuntimesPullSecret(t *testing.T) {
	kyma := &v1beta2.Kyma{ObjectMeta: metav1.ObjectMeta{Name: "kyma-1", Namespace: "kcp-system",
		Labels: map[string]string{shared.RuntimeIDLabel: "runtime-1"}}}
	for _, tc := range []struct {
		secret string
		want   []any
	}{
		{secret: "", want: nil},
		{secret: "registry-credentials", want: []any{map[string]any{"name": "registry-credentials"}}},
	} {
		in, err := NewInstaller(Options{Image: "skr-agent:test", KCPAddress: "kcp.example:443", Contract: "v2",
			SecretName: "skr-agent-tls", PullSecret: tc.secret}, render.New(render.Options{}))
		require.NoError(t, err)
		objs, err := in.render(t.Context(), kyma, "kyma-system", []byte("-----BEGIN CERTIFICATE-----\n"), nil)
		require.NoError(t, err)
		deployments := 0
		for _, o := range objs {
			if o.GetKind() != "Deployment" {
				continue
			}
			deployments++
			got, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "imagePullSecrets")
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "pull secret %q", tc.secret)
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				for _, e := range c.(map[string]any)["env"].([]any) {
					assert.NotEqual(t, render.PullSecretEnv, e.(map[string]any)["name"], "the agent creates no workloads")
				}
			}
		}
		assert.Equal(t, 1, deployments)
	}
}
