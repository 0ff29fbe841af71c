package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/lifecycle-manager/kcp-operator/internal/render"
)

const workloads = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: deploy}
spec:
  template:
    spec:
      initContainers: [{name: init, image: "europe-docker.pkg.dev/kyma-project/prod/external/busybox:1.36.1"}]
      containers: [{name: main, image: "europe-docker.pkg.dev/kyma-project/prod/keda-manager:1.6.0"}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sts}
spec: {template: {spec: {containers: [{name: main, image: "keda-manager@sha256:1111111111111111111111111111111111111111111111111111111111111111"}]}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec: {template: {spec: {containers: [{name: main, image: "docker.io/library/nginx:1.27"}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job}
spec: {template: {spec: {containers: [{name: main, image: "registry.example.com:5000/tools/keda-migrate:1.0"}]}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cron}
spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: main, image: "nginx"}]}}}}}
---
apiVersion: v1
kind: Pod
metadata: {name: pod}
spec:
  containers: [{name: main, image: "europe-docker.pkg.dev/kyma-project/prod/keda-manager:1.6.0"}]
  ephemeralContainers: [{name: debug, image: "busybox:1.35"}]
---
apiVersion: operator.kyma-project.io/v1beta1
kind: Keda
metadata: {name: default}
spec: {template: {spec: {containers: [{name: main, image: "nginx:1.0"}]}}}
`

func images(t *testing.T, objs []*unstructured.Unstructured, kind, name string, fields ...string) []string {
	t.Helper()
	var out []string
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		containers, _, err := unstructured.NestedSlice(find(t, objs, kind, name).Object, append(fields, list)...)
		require.NoError(t, err)
		for _, c := range containers {
			out = append(out, c.(map[string]any)["image"].(string))
		}
	}
	return out
}

func TestLocalizedImages(t *testing.T) {
	req := rawRequest([]byte(workloads + "\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" +
		"metadata: {name: kedas.operator.kyma-project.io}\nspec: {group: operator.kyma-project.io, scope: Namespaced, names: {kind: Keda, plural: kedas}}\n"))
	req.LocalizedImages = []string{
		"mirror.example.com/other/keda-manager:9.9.9",
		"mirror.example.com/kyma-project/prod/keda-manager:1.6.0-mirrored",
		"mirror.example.com/busybox",             // no tag: keeps the original's
		"mirror.example.com/docker/nginx:1.27.3", // library/nginx and nginx share only "nginx"
		"mirror.example.com/tools/keda-migrate@sha256:2222222222222222222222222222222222222222222222222222222222222222",
	}
	objs, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)

	tmpl := []string{"spec", "template", "spec"}
	assert.Equal(t, []string{"mirror.example.com/busybox:1.36.1", "mirror.example.com/kyma-project/prod/keda-manager:1.6.0-mirrored"},
		images(t, objs, "Deployment", "deploy", tmpl...), "init containers too; the localized image sharing most path segments wins")
	assert.Equal(t, []string{"mirror.example.com/other/keda-manager:9.9.9"}, images(t, objs, "StatefulSet", "sts", tmpl...),
		"equally good matches: the first listed wins")
	assert.Equal(t, []string{"mirror.example.com/docker/nginx:1.27.3"}, images(t, objs, "DaemonSet", "ds", tmpl...))
	assert.Equal(t, []string{"mirror.example.com/tools/keda-migrate@sha256:2222222222222222222222222222222222222222222222222222222222222222"},
		images(t, objs, "Job", "job", tmpl...), "a registry port is not a tag")
	assert.Equal(t, []string{"mirror.example.com/docker/nginx:1.27.3"},
		images(t, objs, "CronJob", "cron", "spec", "jobTemplate", "spec", "template", "spec"))
	assert.Equal(t, []string{"mirror.example.com/kyma-project/prod/keda-manager:1.6.0-mirrored", "mirror.example.com/busybox:1.35"},
		images(t, objs, "Pod", "pod", "spec"), "ephemeral containers too")
	assert.Equal(t, []string{"nginx:1.0"}, images(t, objs, "Keda", "default", tmpl...), "custom resources are left alone")
}

func TestLocalizedImagesWithoutMatchChangeNothing(t *testing.T) {
	builtinOnly, _, _ := strings.Cut(workloads, "---\napiVersion: operator.kyma-project.io/v1beta1")
	req := rawRequest([]byte(builtinOnly))
	plain, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	req.LocalizedImages = []string{"mirror.example.com/unrelated:1.0", "mirror.example.com/manager:2.0"}
	localized, err := render.New(render.Options{}).Render(t.Context(), req, nil)
	require.NoError(t, err)
	assert.Equal(t, plain, localized, `"keda-manager" does not match "manager": whole segments only`)
}
