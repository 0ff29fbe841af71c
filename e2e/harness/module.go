package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// Sample module facts.
const (
	SampleModule     = "sample"
	SampleDeployment = "sample-operator"
	SampleConfigMap  = "sample-settings" // only in 2.0.0
)

// publishSample publishes the sample module with modulectl, as a module
// team would: 1.0.0 in channel regular, 2.0.0 in fast.
func (h *Harness) publishSample(ctx context.Context) error {
	for _, v := range []struct{ version, channel string }{{"1.0.0", "regular"}, {"2.0.0", "fast"}} {
		if err := h.Publish(ctx, v.version, v.channel); err != nil {
			return err
		}
	}
	return nil
}

// Publish publishes a version of the sample module to a channel with
// modulectl and applies the template and release meta it writes.
func (h *Harness) Publish(ctx context.Context, version, channel string) error {
	return h.PublishFrom(ctx, version, channel, version)
}

// PublishFrom publishes the sample module's manifests of version from as
// version, with more modulectl flags (e.g. --sign-key).
func (h *Harness) PublishFrom(ctx context.Context, version, channel, from string, args ...string) error {
	h.progress("publishing module %s %s to channel %s with modulectl %s", SampleModule, version, channel, strings.Join(args, " "))
	src := filepath.Join(RepoRoot(), "e2e", "testdata", "sample")
	out := filepath.Join(h.RunDir, "catalog")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	template := filepath.Join(out, SampleModule+"-"+version+".yaml")
	meta := filepath.Join(out, SampleModule+".yaml")
	cmd := exec.CommandContext(ctx, h.Bin.Modulectl, "publish", "--name", SampleModule, "--version", version,
		"--manifest", filepath.Join(src, from), "--default-cr", filepath.Join(src, "default-cr.yaml"),
		"--registry", h.Registry, "--insecure", "--channel", channel, "--namespace", Namespace,
		"--output", template, "--release-meta", meta, "--quiet")
	cmd.Args = append(cmd.Args, args...)
	if combined, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("modulectl publish %s: %w\n%s", version, err, combined)
	}
	for _, file := range []string{template, meta} {
		if err := h.applyFile(ctx, file); err != nil {
			return err
		}
	}
	return nil
}

// applyFile server-side applies every object of a YAML file to the KCP.
func (h *Harness) applyFile(ctx context.Context, path string) error {
	return ApplyFile(ctx, h.KCP.Client, path, Namespace, "e2e-harness")
}

// ApplyFile server-side applies every object of a YAML file with c as
// owner; objects without a namespace go to namespace.
func ApplyFile(ctx context.Context, c client.Client, path, namespace, owner string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner(owner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// operatorKubeconfig is what the runtime's access Secret holds: in local
// mode a token of the runtime chart's ServiceAccount with the server behind
// the runtime's Proxy, in clusters mode the runtime's kubeconfig as given.
func (rt *Runtime) operatorKubeconfig() ([]byte, error) {
	if rt.accessKubeconfig != nil {
		return rt.accessKubeconfig, nil
	}
	kc, err := os.ReadFile(rt.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig of %s: %w", rt.Name, err)
	}
	return kc, nil
}

// CreateKyma gives a runtime its access Secret and its Kyma with modules.
func (h *Harness) CreateKyma(ctx context.Context, rt *Runtime, channel string, modules ...string) error {
	kubeconfig, err := rt.operatorKubeconfig()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + rt.KymaName, Namespace: Namespace,
			Labels: map[string]string{shared.KymaNameLabel: rt.KymaName}},
		Data: map[string][]byte{shared.KubeconfigSecretKey: kubeconfig},
	}
	if err := h.KCP.Client.Create(ctx, secret); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating the access Secret of %s: %w", rt.KymaName, err)
	}
	kyma := &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: rt.KymaName, Namespace: Namespace,
			Labels: map[string]string{shared.RuntimeIDLabel: rt.RuntimeID}},
		Spec: v1beta2.KymaSpec{Channel: channel},
	}
	if rt.AgentPort != 0 {
		kyma.Annotations = map[string]string{shared.AgentWebhookURLAnnotation: "https://" + portAddr(rt.AgentPort)}
	}
	for _, m := range modules {
		kyma.Spec.Modules = append(kyma.Spec.Modules, v1beta2.Module{Name: m})
	}
	h.progress("creating Kyma %s for %s with modules [%s]", rt.KymaName, rt.Name, strings.Join(modules, ", "))
	return h.KCP.Client.Create(ctx, kyma)
}
