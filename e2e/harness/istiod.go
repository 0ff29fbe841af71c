package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// IstioNamespace is istiod's namespace, and the ingress gateway's.
const IstioNamespace = "istio-system"

// IstiodBinEnv names the pilot-discovery binary (the Makefile sets it from
// hack/istiod.sh); unset, the harness runs that script itself.
const IstiodBinEnv = "ISTIOD_BIN"

// istioCRDFile is the CRD YAML of the same Istio version, which
// hack/istiod.sh puts beside the binary.
const istioCRDFile = "crd-all.gen.yaml"

// Istiod is Istio's control plane (pilot-discovery) run as a process
// against the KCP's API server, as in a cluster but without one: no pod,
// no CA, no webhook patching; every port on loopback.
type Istiod struct {
	Process *Process
	// XDSAddr serves xDS over plaintext gRPC (a gateway proxy's port 15010).
	XDSAddr string
	// WebhookAddr serves the validation webhook (/validate) over HTTPS with
	// the certificate of ca.
	WebhookAddr string
	httpAddr    string
	ca          *testCA
}

// IstiodBinary returns pilot-discovery: $ISTIOD_BIN, else what
// hack/istiod.sh builds (minutes the first time, then cached).
func IstiodBinary(ctx context.Context) (string, error) {
	if bin := os.Getenv(IstiodBinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", IstiodBinEnv, bin, err)
		}
		return bin, nil
	}
	script := filepath.Join(RepoRoot(), "hack", "istiod.sh")
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("istiod is needed and %s could not build it (or set %s): %w\n%s", script, IstiodBinEnv, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// StartIstiod installs Istio's CRDs into the KCP and starts istiod
// watching it, in namespace istio-system with the KCP admin's kubeconfig.
func (h *Harness) StartIstiod(ctx context.Context) (*Istiod, error) {
	bin, err := IstiodBinary(ctx)
	if err != nil {
		return nil, err
	}
	if err := installCRDFile(ctx, h.KCP.Client, filepath.Join(filepath.Dir(bin), istioCRDFile)); err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, h.KCP.Client, IstioNamespace); err != nil {
		return nil, err
	}
	dir := filepath.Join(h.RunDir, "istiod")
	ca, err := newTestCA(dir, "istiod", "127.0.0.1", "istiod."+IstioNamespace+".svc")
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(ctx, 4)
	if err != nil {
		return nil, err
	}
	i := &Istiod{XDSAddr: portAddr(ports[0]), WebhookAddr: portAddr(ports[1]), httpAddr: portAddr(ports[2]), ca: ca}
	mesh := filepath.Join(dir, "mesh.yaml")
	// An empty mesh config is Istio's defaults (trust domain cluster.local).
	if err := os.WriteFile(mesh, []byte("{}\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", mesh, err)
	}
	i.Process = &Process{
		Name: "istiod", Bin: bin, Log: filepath.Join(h.RunDir, "logs", "istiod.log"),
		Args: []string{
			"discovery",
			"--kubeconfig=" + h.KCP.Kubeconfig,
			"--namespace=" + IstioNamespace,
			"--registries=Kubernetes",
			"--clusterID=Kubernetes",
			"--meshConfig=" + mesh,
			"--networksConfig=" + mesh,
			"--grpcAddr=" + i.XDSAddr,
			"--httpsAddr=" + i.WebhookAddr,
			"--httpAddr=" + i.httpAddr,
			"--monitoringAddr=" + portAddr(ports[3]),
			// No CA here, so no mTLS xDS port; the fake gateway uses plaintext.
			"--secureGRPCAddr=",
			"--tlsCertFile=" + ca.certFile, "--tlsKeyFile=" + ca.keyFile, "--caCertFile=" + ca.caFile,
		},
		Env: istiodEnv(),
	}
	if err := i.Process.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	if !waitFor(ctx, 2*time.Minute, func() bool { return i.ready(ctx) }) {
		_ = i.Process.Stop()
		return nil, fmt.Errorf("istiod did not become ready; its log:\n%s", i.Process.Tail(8000))
	}
	return i, nil
}

// istiodEnv switches off what needs a cluster around istiod: its CA (and
// so the Kubernetes Secrets it keeps), the patching of webhook
// configurations, sidecar injection, leader election, Gateway API (its
// CRDs are not installed).
func istiodEnv() []string {
	return []string{
		"POD_NAMESPACE=" + IstioNamespace,
		"POD_NAME=istiod-e2e",
		"ENABLE_CA_SERVER=false",
		"VALIDATION_WEBHOOK_CONFIG_NAME=",
		"INJECTION_WEBHOOK_CONFIG_NAME=",
		"INJECT_ENABLED=false",
		"ENABLE_LEADER_ELECTION=false",
		"PILOT_ENABLE_GATEWAY_API=false",
		"PILOT_ENABLE_GATEWAY_API_STATUS=false",
		"PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER=false",
		"PILOT_ENABLE_ANALYSIS=false",
		// Pushes follow a change within a second instead of the default
		// 100 ms debounce stretched up to 10 s.
		"PILOT_DEBOUNCE_MAX=1s",
	}
}

func (i *Istiod) ready(ctx context.Context) bool { return httpOK(ctx, "http://"+i.httpAddr+"/ready") }

// httpOK reports whether a GET of url answers 200.
func httpOK(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop stops istiod.
func (i *Istiod) Stop() error { return i.Process.Stop() }

// RegisterValidation makes the KCP's API server ask istiod's validation
// webhook about every Istio object written in namespace, as an Istio
// installation registers it in a cluster, with failurePolicy Fail (which
// istiod sets there once it serves). The API server runs on this machine,
// so it calls a loopback URL. The returned func removes the registration.
func (i *Istiod) RegisterValidation(ctx context.Context, c client.Client, namespace string) (func(), error) {
	url := "https://" + i.WebhookAddr + "/validate"
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "istio-validator-" + namespace},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "validation.istio.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: i.ca.pem},
			Rules:                   []admissionregistrationv1.RuleWithOperations{istioRule()},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				corev1.LabelMetadataName: namespace,
			}},
		}},
	}
	if err := c.Create(ctx, cfg); err != nil {
		return nil, fmt.Errorf("registering istiod's validation webhook: %w", err)
	}
	return func() { _ = c.Delete(context.WithoutCancel(ctx), cfg) }, nil
}

func istioRule() admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"networking.istio.io"}, APIVersions: []string{"*"}, Resources: []string{"*"},
		},
	}
}

// installCRDFile creates the CRDs of a YAML file and waits until they are
// served.
func installCRDFile(ctx context.Context, c client.Client, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading Istio's CRDs (hack/istiod.sh puts them beside the binary): %w", err)
	}
	var names []string
	for doc := range strings.SplitSeq(string(raw), "\n---") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(doc), crd); err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		if crd.Name == "" {
			continue
		}
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("%s holds no CRD", path)
	}
	established := func() bool {
		for _, n := range names {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if c.Get(ctx, client.ObjectKey{Name: n}, crd) != nil || !crdEstablished(crd) {
				return false
			}
		}
		return true
	}
	if !waitFor(ctx, time.Minute, established) {
		return errors.New("istio's CRDs did not become established within a minute")
	}
	return nil
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
