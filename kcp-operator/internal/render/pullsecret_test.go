package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

const pullSecretWorkloads = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: deploy}
spec:
  template:
    spec:
      imagePullSecrets: [{name: module-own}]
      initContainers: [{name: init, image: busybox}]
      containers:
      - {name: main, image: manager, env: [{name: LOG_LEVEL, value: info}]}
      - {name: sidecar, image: proxy, env: [{name: SKR_IMG_PULL_SECRET, value: stale}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sts}
spec: {template: {spec: {containers: [{name: main, image: db}]}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec: {template: {spec: {containers: [{name: main, image: agent}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job}
spec: {template: {spec: {containers: [{name: main, image: migrate}]}}}
`

func podSpec(t *testing.T, objs []*unstructured.Unstructured, kind, name string) map[string]any {
	t.Helper()
	spec, _, err := unstructured.NestedMap(find(t, objs, kind, name).Object, "spec", "template", "spec")
	require.NoError(t, err)
	return spec
}

func envOf(container any) map[string]any {
	out := map[string]any{}
	env, _ := container.(map[string]any)["env"].([]any)
	for _, e := range env {
		m := e.(map[string]any)
		out[m["name"].(string)] = m["value"]
	}
	return out
}

func TestPullSecretGoesToDeploymentsAndStatefulSets(t *testing.T) {
	req := rawRequest([]byte(pullSecretWorkloads))
	plain, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	req.PullSecret = "registry-credentials"
	objs, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)

	deploy := podSpec(t, objs, "Deployment", "deploy")
	assert.Equal(t, []any{map[string]any{"name": "module-own"}, map[string]any{"name": "registry-credentials"}},
		deploy["imagePullSecrets"], "the module's own pull secrets are kept")
	containers := deploy["containers"].([]any)
	assert.Equal(t, map[string]any{"LOG_LEVEL": "info", render.PullSecretEnv: "registry-credentials"}, envOf(containers[0]))
	assert.Equal(t, map[string]any{render.PullSecretEnv: "registry-credentials"}, envOf(containers[1]),
		"a container's own value is replaced by the operator's")
	assert.Empty(t, envOf(deploy["initContainers"].([]any)[0]), "init containers pull with the pod's secrets; they get no env")

	sts := podSpec(t, objs, "StatefulSet", "sts")
	assert.Equal(t, []any{map[string]any{"name": "registry-credentials"}}, sts["imagePullSecrets"])
	assert.Equal(t, map[string]any{render.PullSecretEnv: "registry-credentials"}, envOf(sts["containers"].([]any)[0]))

	for _, kind := range [][2]string{{"DaemonSet", "ds"}, {"Job", "job"}} {
		assert.Equal(t, find(t, plain, kind[0], kind[1]), find(t, objs, kind[0], kind[1]), "%s is untouched", kind[0])
	}
}

func TestPullSecretAlreadyListedIsNotDoubled(t *testing.T) {
	req := rawRequest([]byte(pullSecretWorkloads))
	req.PullSecret = "module-own"
	objs, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{"name": "module-own"}}, podSpec(t, objs, "Deployment", "deploy")["imagePullSecrets"])
}

func TestPullSecretIsPartOfTheCacheKey(t *testing.T) {
	r := render.New(render.Options{})
	req := rawRequest([]byte(pullSecretWorkloads))
	_, err := r.Render(t.Context(), req, nil)
	require.NoError(t, err)
	req.PullSecret = "registry-credentials"
	objs, err := r.Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Contains(t, podSpec(t, objs, "StatefulSet", "sts"), "imagePullSecrets", "a cached render without the secret is not reused")
}
