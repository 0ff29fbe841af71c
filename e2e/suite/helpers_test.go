package suite

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
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

// ensureKyma creates the runtime's Kyma once.
func ensureKyma(t *testing.T, rt *harness.Runtime, modules ...string) {
	t.Helper()
	err := h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, &v1beta2.Kyma{})
	if apierrors.IsNotFound(err) {
		require.NoError(t, h.CreateKyma(t.Context(), rt, "regular", modules...))
	}
	eventuallyKyma(t, rt, "Ready with the agent", func(k *v1beta2.Kyma) bool { return ready(k) && pushReady(k) })
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
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsreload.ClientConfig(kp, roots, "localhost")}}
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
		RootCAs: roots, Certificates: []tls.Certificate{kp}, ServerName: "localhost", MinVersion: tls.VersionTLS12,
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
