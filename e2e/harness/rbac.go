package harness

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// In local mode the operator runs with the permissions users give it, not
// as an admin: in the KCP with a token of the ServiceAccount that
// charts/kcp-operator creates, bound by that chart's Roles; in each runtime
// with a token of the ServiceAccount that charts/kcp-operator-runtime binds
// to its ClusterRole. Both charts are rendered with the Helm library as
// `helm install` renders them and their RBAC objects applied as they are;
// audit.go then finds every request the API servers refused.
const (
	operatorRelease = "kcp-operator"
	runtimeRelease  = "kcp-operator-runtime"
	// RuntimeAccessNamespace holds the operator's ServiceAccount in each
	// runtime: a namespace the operator never deletes, unlike kyma-system.
	RuntimeAccessNamespace = "kube-system"
	// tokenSeconds outlives any run of the suite or the demo.
	tokenSeconds = 24 * 60 * 60
)

// SampleAPIGroup is the API group of the sample module's CRs, which the
// runtime chart's moduleAPIGroups must name.
const SampleAPIGroup = "sample.kyma-project.io"

var rbacKinds = []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}

// operatorChartValues match the flags configureOperator passes: one watched
// namespace, the listener in direct mode (no Istio, no Watcher routes), the
// certificates in the watched namespace, built-in or (certManager) from
// cert-manager with the chart's own CA.
func operatorChartValues(certManager bool) map[string]any {
	values := map[string]any{
		"namespaces": []any{Namespace},
		"listener":   map[string]any{"mode": "direct"},
		"agent":      map[string]any{"kcpAddress": "localhost"},
	}
	if certManager {
		values["certificates"] = map[string]any{"backend": "cert-manager"}
	}
	return values
}

// runtimeChartValues grant for module content exactly what the sample
// module ships (e2e/testdata/sample: a CRD, a ServiceAccount with a
// ClusterRole and its binding, a Deployment, in 2.0.0 a ConfigMap, and its
// Sample CR), so that the suite proves the chart's fixed rules are all the
// operator needs besides a module's own kinds and RBAC.
func runtimeChartValues() map[string]any {
	return map[string]any{
		"moduleResources": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps", "serviceaccounts"}},
			map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}},
		},
		"moduleAPIGroups": []any{SampleAPIGroup},
		"moduleRBAC":      true,
	}
}

// installOperatorRBAC applies the kcp-operator chart's RBAC to the KCP and
// writes a kubeconfig with a token of the chart's ServiceAccount, which the
// operator then runs with.
func (h *Harness) installOperatorRBAC(ctx context.Context) error {
	sa, err := installChartRBAC(ctx, h.KCP, "kcp-operator", operatorRelease, Namespace, operatorChartValues(h.opts.CertManager))
	if err != nil {
		return err
	}
	kc, err := serviceAccountKubeconfig(ctx, h.KCP, Namespace, sa, h.KCP.Config.Host)
	if err != nil {
		return err
	}
	h.OperatorKubeconfig = filepath.Join(h.RunDir, "kcp-operator.kubeconfig")
	if err := os.WriteFile(h.OperatorKubeconfig, kc, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", h.OperatorKubeconfig, err)
	}
	h.progress("kcp-operator runs as ServiceAccount %s/%s with the chart's RBAC", Namespace, sa)
	return nil
}

// installRuntimeAccess applies the kcp-operator-runtime chart to a runtime
// and keeps the kubeconfig that its KCP access Secret will hold: a token of
// the chart's ServiceAccount, the server as the operator reaches it (in
// local mode through the runtime's Proxy).
func (h *Harness) installRuntimeAccess(ctx context.Context, rt *Runtime, server string) error {
	sa, err := installChartRBAC(ctx, rt.Cluster, "kcp-operator-runtime", runtimeRelease, RuntimeAccessNamespace, runtimeChartValues())
	if err != nil {
		return err
	}
	kc, err := serviceAccountKubeconfig(ctx, rt.Cluster, RuntimeAccessNamespace, sa, server)
	if err != nil {
		return err
	}
	rt.accessKubeconfig = kc
	return nil
}

// installChartRBAC renders a chart of charts/ and applies its RBAC objects
// as an admin; it returns the name of the chart's ServiceAccount.
func installChartRBAC(ctx context.Context, c *Cluster, chart, release, namespace string, values map[string]any) (string, error) {
	objs, err := RenderChart(filepath.Join(RepoRoot(), "charts", chart), release, namespace, values)
	if err != nil {
		return "", err
	}
	sa := ""
	for _, obj := range objs {
		if !slices.Contains(rbacKinds, obj.GetKind()) {
			continue
		}
		if obj.GetKind() == "ServiceAccount" {
			sa = obj.GetName()
		}
		if err := c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			return "", fmt.Errorf("applying %s %s/%s of chart %s to %s: %w",
				obj.GetKind(), obj.GetNamespace(), obj.GetName(), chart, c.Name, err)
		}
	}
	if sa == "" {
		return "", fmt.Errorf("chart %s rendered no ServiceAccount", chart)
	}
	return sa, nil
}

// RenderChart renders a chart as `helm install` does, into namespace, and
// returns its objects in the order of its files.
func RenderChart(dir, release, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
	vals, err := chartutil.ToRenderValues(ch, values,
		chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, fmt.Errorf("values of chart %s: %w", dir, err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for doc := range strings.SplitSeq(files[name], "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(u.Object) > 0 {
				objs = append(objs, u)
			}
		}
	}
	return objs, nil
}

// serviceAccountKubeconfig asks the API server for a token of a
// ServiceAccount (TokenRequest) and returns a kubeconfig with only inline
// credentials, as the operator accepts them: the token and the CA.
func serviceAccountKubeconfig(ctx context.Context, c *Cluster, namespace, name, server string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("a clientset for %s: %w", c.Name, err)
	}
	seconds := int64(tokenSeconds)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}},
		metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token of ServiceAccount %s/%s in %s: %w", namespace, name, c.Name, err)
	}
	user := "system:serviceaccount:" + namespace + ":" + name
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: user}
	cfg.CurrentContext = c.Name
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of %s: %w", user, err)
	}
	return out, nil
}
