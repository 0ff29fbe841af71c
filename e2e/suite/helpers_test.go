package suite

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/e2e/harness"
)

// runtime is the i-th runtime of the suite; in clusters mode, which has one,
// every scenario runs there and sets up its own Given.
func runtime(i int) *harness.Runtime { return h.Runtimes[i%len(h.Runtimes)] }

// listenerName is the name the listener's certificate gives: the host of
// its address.
func listenerName(t *testing.T) string {
	t.Helper()
	host, _, err := net.SplitHostPort(h.ListenerAddr)
	require.NoError(t, err)
	return host
}

// withoutModules gives the runtime's Kyma no modules and waits until it is
// Ready so.
func withoutModules(t *testing.T, rt *harness.Runtime) {
	t.Helper()
	ensureKyma(t, rt)
	if len(kyma(t, rt).Spec.Modules) > 0 {
		updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) { k.Spec.Modules = nil })
	}
	// A scenario before may have emptied the list without waiting for its
	// modules to leave the runtime.
	eventuallyKyma(t, rt, "Ready without modules", func(k *v1beta2.Kyma) bool {
		return ready(k) && len(k.Spec.Modules) == 0 && len(k.Status.Modules) == 0
	})
}

// ensureKyma creates the runtime's Kyma once and gives it at least the
// given modules: scenarios share a runtime (in clusters mode all of them),
// so each sets up its own Given.
func ensureKyma(t *testing.T, rt *harness.Runtime, modules ...string) {
	t.Helper()
	k := &v1beta2.Kyma{}
	err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k)
	if apierrors.IsNotFound(err) {
		require.NoError(t, h.CreateKyma(t.Context(), rt, "regular", modules...))
	} else if missing := missingModules(k, modules); len(missing) > 0 {
		eventuallyKyma(t, rt, "Ready with the agent", func(k *v1beta2.Kyma) bool { return ready(k) && pushReady(k) })
		updateRuntimeKyma(t, rt, func(k *v1beta2.Kyma) {
			for _, m := range missingModules(k, modules) {
				k.Spec.Modules = append(k.Spec.Modules, v1beta2.Module{Name: m})
			}
		})
	}
	eventuallyKyma(t, rt, "Ready with the agent and its modules", func(k *v1beta2.Kyma) bool {
		return ready(k) && pushReady(k) && len(missingModules(k, modules)) == 0 && len(k.Status.Modules) >= len(modules)
	})
}

// missingModules are those of names the Kyma's spec does not list.
func missingModules(k *v1beta2.Kyma, names []string) []string {
	var missing []string
	for _, name := range names {
		if !slices.ContainsFunc(k.Spec.Modules, func(m v1beta2.Module) bool { return m.Name == name }) {
			missing = append(missing, name)
		}
	}
	return missing
}

func deployment(t *testing.T, rt *harness.Runtime, name string) (*appsv1.Deployment, error) {
	t.Helper()
	d := &appsv1.Deployment{}
	return d, rt.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: name}, d)
}

// sampleSettingsExist reports whether the ConfigMap of sample 2.0.0 is in the runtime.
func sampleSettingsExist(t *testing.T, rt *harness.Runtime) bool {
	t.Helper()
	key := client.ObjectKey{Namespace: "kyma-system", Name: harness.SampleConfigMap}
	return rt.Client.Get(t.Context(), key, &corev1.ConfigMap{}) == nil
}

// metric sums the samples of an operator metric whose labels contain match.
func metric(t *testing.T, name, match string) float64 {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+h.MetricsAddr+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") || !strings.Contains(line, match) {
			continue
		}
		if rest := strings.TrimPrefix(line, name); rest != "" && rest[0] != '{' && rest[0] != ' ' {
			continue // another metric with this prefix
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		require.NoError(t, err)
		total += v
	}
	return total
}

// kcpCA returns the KCP's built-in CA, to make certificates with.
func kcpCA(t *testing.T) *pki.CA {
	t.Helper()
	s := &corev1.Secret{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca"}, s))
	ca, err := pki.ParseCA(s.Data["tls.crt"], s.Data["tls.key"])
	require.NoError(t, err)
	return ca
}

// postEvent sends the public runtime-watcher payload to the listener with
// the given certificate, as an agent of the public runtime-watcher would.
func postEvent(ctx context.Context, t *testing.T, certPEM, keyPEM []byte) (int, error) {
	t.Helper()
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	bundle := &corev1.Secret{}
	require.NoError(t, h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca-bundle"}, bundle))
	roots, err := tlsreload.NewBundle(bundle.Data["ca.crt"])
	require.NoError(t, err)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsreload.ClientConfig(kp, roots, listenerName(t))}}
	body := `{"watched":{"Namespace":"kyma-system","Name":"default"},"watchedGvk":{"group":"operator.kyma-project.io","version":"v1beta2","kind":"Kyma"}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+h.ListenerAddr+"/v2/lifecycle-manager/event", bytes.NewBufferString(body))
	require.NoError(t, err)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// publicAgentClient is an HTTP client configured as the public
// runtime-watcher agent configures its own: a plain http.Transport with a
// TLS config (client certificate, the KCP's CA), which keeps it on HTTP/1.1.
func publicAgentClient(t *testing.T, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	kp, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	bundle := &corev1.Secret{}
	require.NoError(t, h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca-bundle"}, bundle))
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(bundle.Data["ca.crt"]))
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, Certificates: []tls.Certificate{kp}, ServerName: listenerName(t), MinVersion: tls.VersionTLS12,
	}}}
}

// issue makes a client certificate for cn signed by ca.
func issue(t *testing.T, ca *pki.CA, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{CommonName: cn, Usage: pki.UsageClient, NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)
	return certPEM, keyPEM
}

func agentSecret(t *testing.T, rt *harness.Runtime) (*corev1.Secret, error) {
	t.Helper()
	s := &corev1.Secret{}
	return s, rt.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "skr-agent-tls"}, s)
}
