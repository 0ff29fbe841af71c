package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PullSecretEnv names the environment variable that tells a module's
// containers the name of the runtime's image pull Secret, so that a module
// manager can hand it on to the workloads it creates itself.
const PullSecretEnv = "SKR_IMG_PULL_SECRET"

// pullSecretKinds are the workloads that get the runtime's image pull
// Secret: the kinds module managers ship as.
var pullSecretKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
}

// addPullSecret adds secret to the imagePullSecrets of a Deployment or
// StatefulSet, keeping those the module names, and sets PullSecretEnv in
// every container. A container's own PullSecretEnv is overwritten: the
// Secret in the runtime is the operator's, under the name it chose.
func addPullSecret(obj *unstructured.Unstructured, secret string) {
	if secret == "" || !pullSecretKinds[obj.GroupVersionKind().GroupKind()] {
		return
	}
	spec := nestedMap(obj.Object, "spec", "template", "spec")
	if spec == nil {
		return
	}
	refs, _ := spec["imagePullSecrets"].([]any)
	if !hasNamed(refs, secret) {
		spec["imagePullSecrets"] = append(refs, map[string]any{"name": secret})
	}
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		container, ok := c.(map[string]any)
		if !ok {
			continue
		}
		container["env"] = withEnv(container["env"], PullSecretEnv, secret)
	}
}

func hasNamed(list []any, name string) bool {
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			return true
		}
	}
	return false
}

func withEnv(env any, name, value string) []any {
	list, _ := env.([]any)
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			delete(m, "valueFrom")
			m["value"] = value
			return list
		}
	}
	return append(list, map[string]any{"name": name, "value": value})
}
