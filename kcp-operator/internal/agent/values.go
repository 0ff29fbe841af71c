package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// DriftManager is the manager of the built-in watch on module resources:
// the listener hands its events to the Manifest controller.
const DriftManager = "lifecycle-manager-modules"

// Options configure the agents the operator installs.
type Options struct {
	// Image is the agent image, repository:tag or repository@sha256:….
	Image string
	// KCPAddress is host[:port] the agents send events to.
	KCPAddress string
	// Contract is the first path segment of event URLs (v2).
	Contract string
	// WebhookURL makes the runtime's API server call this URL instead of
	// the agent's Service (local runs where no pods run).
	WebhookURL string
	// WebhookURLHosts are the hosts (host[:port]) a Kyma's agent-webhook-url
	// annotation may name; empty: the annotation is ignored.
	WebhookURLHosts []string
	// DriftWatch adds the watch on module resources.
	DriftWatch bool
	// SecretName is the agent's TLS Secret in the runtime.
	SecretName string
	// PullSecret is the runtime's image pull Secret the agent's pod pulls
	// with (--skr-image-pull-secret); empty: none.
	PullSecret string
}

// Fullname is the name of the agent's objects in a runtime namespace. In
// kyma-system it is skr-agent; in other namespaces (several runtimes on one
// API server, as in the scale harness) the namespace is added, because the
// webhook configuration is cluster-scoped.
func Fullname(namespace string) string {
	if namespace == shared.DefaultRuntimeNamespace {
		return "skr-agent"
	}
	return "skr-agent-" + namespace
}

// values are the chart values of the agent of one runtime.
func (o Options) values(kyma *v1beta2.Kyma, namespace string, caBundle []byte, watchers []v1beta2.Watcher) (map[string]any, error) {
	image, err := imageValues(o.Image)
	if err != nil {
		return nil, err
	}
	webhookURL, _ := o.webhookURL(kyma) // Install reports a refused annotation
	values := map[string]any{
		"fullnameOverride": Fullname(namespace),
		"image":            image,
		"runtimeID":        kyma.RuntimeID(),
		"kcp":              map[string]any{"address": o.KCPAddress, "contract": o.Contract},
		"tls":              map[string]any{"secretName": o.SecretName, "caBundle": string(caBundle)},
		"webhook":          map[string]any{"url": webhookURL},
		"watchers":         o.watcherValues(watchers),
	}
	if o.PullSecret != "" {
		// Only when set: the values, and so the agents, of runtimes stay
		// as they were without one.
		values["imagePullSecrets"] = []any{map[string]any{"name": o.PullSecret}}
	}
	return values, nil
}

func (o Options) watcherValues(watchers []v1beta2.Watcher) []any {
	sorted := slices.Clone(watchers)
	slices.SortFunc(sorted, func(a, b v1beta2.Watcher) int { return strings.Compare(a.Name, b.Name) })
	out := make([]any, 0, len(sorted)+1)
	for _, w := range sorted {
		if !w.DeletionTimestamp.IsZero() || w.ManagerName() == "" {
			continue
		}
		labels := map[string]any{}
		for k, v := range w.Spec.LabelsToWatch {
			labels[k] = v
		}
		out = append(out, map[string]any{
			"name": w.Name, "manager": w.ManagerName(), "field": string(w.Spec.Field), "labelsToWatch": labels,
			"resourceToWatch": map[string]any{
				"group": w.Spec.ResourceToWatch.Group, "version": w.Spec.ResourceToWatch.Version,
				"resource": w.Spec.ResourceToWatch.Resource,
			},
		})
	}
	if o.DriftWatch {
		// Every object the operator placed carries the managed-by label;
		// edits and deletions of them are repaired by push.
		out = append(out, map[string]any{
			"name": DriftManager, "manager": DriftManager, "field": "spec",
			"labelsToWatch":   map[string]any{shared.ManagedByLabel: shared.OperatorName},
			"resourceToWatch": map[string]any{"group": "*", "version": "*", "resource": "*"},
			"operations":      []any{"UPDATE", "DELETE"},
		})
	}
	return out
}

// imageValues splits an image reference into the chart's image values.
func imageValues(ref string) (map[string]any, error) {
	if ref == "" {
		return nil, fmt.Errorf("no agent image configured")
	}
	if repo, digest, ok := strings.Cut(ref, "@"); ok {
		return map[string]any{"repository": repo, "digest": digest}, nil
	}
	slash, colon := strings.LastIndex(ref, "/"), strings.LastIndex(ref, ":")
	if colon > slash {
		return map[string]any{"repository": ref[:colon], "tag": ref[colon+1:]}, nil
	}
	return map[string]any{"repository": ref}, nil
}
