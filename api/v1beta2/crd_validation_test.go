package v1beta2_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
)

// apiServer is one kube-apiserver for the whole package: starting one costs seconds.
var apiServer *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	apiServer = env
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

func TestCRDsAreEstablished(t *testing.T) {
	want := map[string]bool{
		"kymas.operator.kyma-project.io":              false,
		"manifests.operator.kyma-project.io":          false,
		"moduletemplates.operator.kyma-project.io":    false,
		"modulereleasemetas.operator.kyma-project.io": false,
		"watchers.operator.kyma-project.io":           false,
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	require.NoError(t, apiServer.Client.List(t.Context(), &crds))
	for _, crd := range crds.Items {
		if _, ours := want[crd.Name]; !ours {
			continue
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				want[crd.Name] = true
			}
		}
		assert.Equal(t, []string{"v1beta2"}, crd.Status.StoredVersions, crd.Name)
	}
	for name, established := range want {
		assert.True(t, established, "%s is not installed and Established", name)
	}
}

// TestSamplesAreAccepted checks every sample twice: the Go types decode it
// strictly (no field of the public YAML is unknown to us) and the API server
// stores it.
func TestSamplesAreAccepted(t *testing.T) {
	all, err := filepath.Glob("../config/samples/*.yaml")
	require.NoError(t, err)
	// The v1beta1 samples need the conversion webhook: api/v1beta1 and
	// kcp-operator/internal/conversion test them.
	files := slices.DeleteFunc(all, func(f string) bool { return strings.HasSuffix(f, "-v1beta1.yaml") })
	require.Len(t, files, 5, "one sample per kind")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)

			obj := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(raw, &obj.Object))
			typed, err := apiServer.Scheme.New(obj.GroupVersionKind())
			require.NoError(t, err)
			require.NoError(t, yaml.UnmarshalStrict(raw, typed), "the Go types must know every field")

			obj.SetNamespace(namespaceFor(t))
			require.NoError(t, apiServer.Client.Create(t.Context(), obj))
			stored := obj.DeepCopy()
			require.NoError(t, apiServer.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), stored))
			assert.Equal(t, obj.Object["spec"], stored.Object["spec"], "the API server must not prune or change the spec")
		})
	}
}

func TestDefaultsApply(t *testing.T) {
	kyma := &v1beta2.Kyma{}
	kyma.Name, kyma.Namespace = "defaults", namespaceFor(t)
	kyma.Spec.Modules = []v1beta2.Module{{Name: "keda"}}
	require.NoError(t, apiServer.Client.Create(t.Context(), kyma))

	got := kyma.Spec.Modules[0]
	assert.Equal(t, v1beta2.CustomResourcePolicyCreateAndDelete, got.CustomResourcePolicy)
	require.NotNil(t, got.Managed, "managed is defaulted by the API server")
	assert.True(t, got.IsManaged())
	assert.Equal(t, "regular", kyma.EffectiveChannel(got))
}

func namespaceFor(t *testing.T) string {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName("test-")
	require.NoError(t, apiServer.Client.Create(t.Context(), ns))
	return ns.GetName()
}

func TestInvalidObjectsAreRejected(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantField string
	}{{
		name:      "unknown customResourcePolicy",
		yaml:      kymaWithModules(`[{name: keda, customResourcePolicy: Delete}]`),
		wantField: "spec.modules[0].customResourcePolicy",
	}, {
		name:      "duplicate module names",
		yaml:      kymaWithModules(`[{name: keda}, {name: serverless}, {name: keda}]`),
		wantField: "spec.modules[2]",
	}, {
		name:      "module channel with capitals",
		yaml:      kymaWithModules(`[{name: keda, channel: Fast}]`),
		wantField: "spec.modules[0].channel",
	}, {
		name:      "Kyma channel too short",
		yaml:      "apiVersion: operator.kyma-project.io/v1beta2\nkind: Kyma\nmetadata: {name: x}\nspec: {channel: ab}",
		wantField: "spec.channel",
	}, {
		name:      "Kyma channel too long",
		yaml:      "apiVersion: operator.kyma-project.io/v1beta2\nkind: Kyma\nmetadata: {name: x}\nspec: {channel: abcdefghijklmnopqrstuvwxyzabcdefg}",
		wantField: "spec.channel",
	}, {
		name:      "release meta with channels and mandatory",
		yaml:      releaseMeta(`{moduleName: keda, channels: [{channel: regular, version: 1.0.0}], mandatory: {version: 1.0.0}}`),
		wantField: "spec",
	}, {
		name:      "release meta with neither channels nor mandatory",
		yaml:      releaseMeta(`{moduleName: keda}`),
		wantField: "spec",
	}, {
		name:      "release meta with a bad channel name",
		yaml:      releaseMeta(`{moduleName: keda, channels: [{channel: "fast-1", version: 1.0.0}]}`),
		wantField: "spec.channels[0].channel",
	}, {
		name:      "release meta with a version that is not semver",
		yaml:      releaseMeta(`{moduleName: keda, channels: [{channel: fast, version: latest}]}`),
		wantField: "spec.channels[0].version",
	}, {
		name:      "watcher with an unknown field",
		yaml:      watcher(`metadata`, 8082),
		wantField: "spec.field",
	}, {
		name:      "watcher with a port out of range",
		yaml:      watcher(`spec`, 70000),
		wantField: "spec.serviceInfo.port",
	}, {
		name: "template with a bad version",
		yaml: "apiVersion: operator.kyma-project.io/v1beta2\nkind: ModuleTemplate\nmetadata: {name: x}\n" +
			"spec: {moduleName: keda, version: v1, descriptor: {}}",
		wantField: "spec.version",
	}}
	ns := namespaceFor(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(tc.yaml), &obj.Object))
			obj.SetNamespace(ns)
			err := apiServer.Client.Create(t.Context(), obj, client.DryRunAll)
			require.Error(t, err, "the API server accepted an invalid object")
			assert.True(t, apierrors.IsInvalid(err), "want an Invalid error, got %v", err)
			assert.Contains(t, err.Error(), tc.wantField)
		})
	}
}

func kymaWithModules(modules string) string {
	return "apiVersion: operator.kyma-project.io/v1beta2\nkind: Kyma\nmetadata: {name: x}\n" +
		"spec: {channel: regular, modules: " + modules + "}"
}

func releaseMeta(spec string) string {
	return "apiVersion: operator.kyma-project.io/v1beta2\nkind: ModuleReleaseMeta\nmetadata: {name: x}\nspec: " + spec
}

func watcher(field string, port int) string {
	return fmt.Sprintf(`apiVersion: operator.kyma-project.io/v1beta2
kind: Watcher
metadata: {name: x}
spec:
  serviceInfo: {name: svc, namespace: kcp-system, port: %d}
  resourceToWatch: {group: operator.kyma-project.io, version: v1beta2, resource: kymas}
  field: %s
  gateway: {selector: {matchLabels: {a: b}}}
`, port, field)
}
