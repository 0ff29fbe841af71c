package setup_test

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlsreload"
	"github.com/lifecycle-manager/kcp-operator/internal/rotationtrigger"
	"github.com/lifecycle-manager/listener"
	"github.com/lifecycle-manager/listener/event"
)

// TestEmergencyRotationRefusesTheOldCA asks for an emergency rotation on
// the bundle Secret after the CA key "leaked": the agent gets a certificate
// of a new CA, then the old CA leaves the bundle at once (not when it
// expires in a year). A certificate minted with the old key is then refused
// by the operator's listener in direct mode (real mTLS) and by a listener
// in gateway mode fed with the operator's trust bundle, while the agent's
// pushes keep arriving.
func TestEmergencyRotationRefusesTheOldCA(t *testing.T) {
	waitForAgent(t)
	leaked := kcpCA(t)
	resp, err := postAs(t, leaked, runtimeID)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "before: whoever holds the CA key is any runtime")

	annotateBundle(t, rotationtrigger.EmergencyAnnotation, time.Now().Format(time.RFC3339Nano))
	require.Eventually(t, func() bool {
		cas := bundleCAs(t)
		return len(cas) == 1 && !cas[0].Equal(leaked.Cert)
	}, timeout, tick, "the old CA leaves the bundle once the agent has a certificate of the new one")
	newCA := bundleCAs(t)[0]
	require.Eventually(t, func() bool {
		s, err := runtimeSecret(t)
		if err != nil {
			return false
		}
		cas, err := pki.ParseCerts(s.Data["ca.crt"])
		return err == nil && len(cas) == 1 && cas[0].Equal(newCA) && agentLeaf(t, s).CheckSignatureFrom(newCA) == nil
	}, timeout, tick, "the runtime has the new certificate and trusts only the new CA")
	assert.Positive(t, counter(t, "lifecycle_manager_certificate_emergency_rotations_total", "outcome", "all-agents-moved"))
	require.Eventually(t, func() bool { return hasEvent(t, rotationtrigger.ReasonEmergencyDone) }, timeout, tick)
	assert.True(t, hasEvent(t, rotationtrigger.ReasonEmergencyStarted))

	// Direct mode: the operator's own listener, with real mTLS.
	require.Eventually(t, func() bool {
		resp, err := postAs(t, leaked, runtimeID)
		if err == nil {
			resp.Body.Close()
		}
		return err != nil || resp.StatusCode == http.StatusUnauthorized
	}, timeout, tick, "direct: a certificate minted with the old CA is refused")
	pushStillArrives(t)

	// Gateway mode: the listener verifies X-Forwarded-Client-Cert with the trust bundle.
	gw := gatewayListener(t)
	mintedPEM, _, err := leaked.Issue(pki.LeafRequest{CommonName: runtimeID, Usage: pki.UsageClient,
		NotBefore: time.Now(), Duration: time.Hour}, pki.ECDSAP256)
	require.NoError(t, err)
	code, body := gw.post(t, mintedPEM)
	assert.Equal(t, http.StatusUnauthorized, code, "gateway: a certificate minted with the old CA is refused")
	assert.Contains(t, body, "unknown_authority")
	agent, err := runtimeSecret(t)
	require.NoError(t, err)
	code, body = gw.post(t, agent.Data["tls.crt"])
	assert.Equal(t, http.StatusOK, code, "gateway: the agent's new certificate passes: %s", body)
}

func annotateBundle(t *testing.T, key, value string) {
	t.Helper()
	require.Eventually(t, func() bool {
		bundle := &corev1.Secret{}
		if kcp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: op.PKI.Options.BundleSecret}, bundle) != nil {
			return false
		}
		if bundle.Annotations == nil {
			bundle.Annotations = map[string]string{}
		}
		bundle.Annotations[key] = value
		return kcp.Client.Update(t.Context(), bundle) == nil
	}, timeout, tick)
}

func bundleCAs(t *testing.T) []*x509.Certificate {
	t.Helper()
	pemData, err := op.PKI.TrustBundle(t.Context())
	require.NoError(t, err)
	cas, err := pki.ParseCerts(pemData)
	require.NoError(t, err)
	return cas
}

func agentLeaf(t *testing.T, s *corev1.Secret) *x509.Certificate {
	t.Helper()
	certs, err := pki.ParseCerts(s.Data["tls.crt"])
	require.NoError(t, err)
	return certs[0]
}

// hasEvent reports an Event with reason on the bundle Secret.
func hasEvent(t *testing.T, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, kcp.Client.List(t.Context(), &list, client.InNamespace(ns)))
	for _, e := range list.Items {
		if e.Reason == reason && e.Regarding.Name == op.PKI.Options.BundleSecret {
			return true
		}
	}
	return false
}

// pushStillArrives changes the runtime's Kyma and waits for the change in
// the KCP: the agent pushes with its current certificate.
func pushStillArrives(t *testing.T) {
	t.Helper()
	// The last KCP edit (a previous call's) reaches the runtime first: an
	// edit of the runtime before that sync would be overwritten by it.
	require.Eventually(t, func() bool {
		rk := &v1beta2.Kyma{}
		err := runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "default"}, rk)
		return err == nil && rk.Spec.Channel == getKyma(t).Spec.Channel
	}, timeout, tick, "the runtime Kyma has the KCP's channel")
	want := "fast"
	if getKyma(t).Spec.Channel == want {
		want = "regular"
	}
	require.Eventually(t, func() bool {
		rk := &v1beta2.Kyma{}
		if runtimeEnv.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "default"}, rk) != nil {
			return false
		}
		rk.Spec.Channel = want
		return runtimeEnv.Client.Update(t.Context(), rk) == nil
	}, timeout, tick)
	require.Eventually(t, func() bool { return getKyma(t).Spec.Channel == want }, timeout, 20*time.Millisecond,
		"a runtime change reaches the KCP")
	updateKyma(t, func(k *v1beta2.Kyma) { k.Spec.Channel = "regular" })
}

// gateway is a listener in gateway mode with the operator's trust bundle,
// as the operator runs it with --listener-mode=gateway.
type gateway struct{ addr string }

func gatewayListener(t *testing.T) gateway {
	t.Helper()
	pemData, err := op.PKI.TrustBundle(t.Context())
	require.NoError(t, err)
	bundle, err := tlsreload.NewBundle(pemData)
	require.NoError(t, err)
	srv, err := listener.New(listener.Config{
		Mode: listener.ModeGateway, Managers: []string{"m"}, ClientCAs: bundle,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Registerer: prometheus.NewRegistry(),
	})
	require.NoError(t, err)
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ctx, ln) })
	wg.Go(func() { _ = srv.Consume(ctx, "m", func(event.Event) {}) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	require.Eventually(t, func() bool { return srv.HasConsumer("m") }, timeout, tick)
	return gateway{addr: ln.Addr().String()}
}

// post sends an event as the gateway would forward it, with certPEM in
// the X-Forwarded-Client-Cert header.
func (g gateway) post(t *testing.T, certPEM []byte) (int, string) {
	t.Helper()
	body := `{"watched":{"Namespace":"kyma-system","Name":"default"},"watchedGvk":{"version":"v1beta2","kind":"Kyma"}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+g.addr+"/v2/m/event", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-Client-Cert", `Hash=1;Cert="`+url.PathEscape(string(certPEM))+`"`)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestDeniedAgentCertificateIsReplaced puts the agent's certificate on the
// deny list, as after it leaked: the listener refuses it at once (401
// denied_certificate), and the operator issues the runtime a new one, with
// which its pushes arrive again.
func TestDeniedAgentCertificateIsReplaced(t *testing.T) {
	waitForAgent(t)
	before, err := runtimeSecret(t)
	require.NoError(t, err)
	leakedLeaf := agentLeaf(t, before)
	leakedClient := clientWith(t, before.Data["tls.crt"], before.Data["tls.key"])
	deny := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: config.DefaultDenySecret, Namespace: ns},
		StringData: map[string]string{config.DenySecretKey: "# the agent's, leaked\n" + leakedLeaf.SerialNumber.Text(16) + "\n"},
	}
	require.NoError(t, kcp.Client.Create(t.Context(), deny))
	t.Cleanup(func() { _ = kcp.Client.Delete(context.WithoutCancel(t.Context()), deny) })

	require.Eventually(t, func() bool {
		s, err := runtimeSecret(t)
		return err == nil && agentLeaf(t, s).SerialNumber.Cmp(leakedLeaf.SerialNumber) != 0
	}, timeout, tick, "the operator replaced the denied certificate in the runtime")
	require.Eventually(t, func() bool {
		resp, err := leakedClient.Do(publicEventRequest(t))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized
	}, timeout, tick, "the listener refuses the leaked certificate")
	assert.Positive(t, counter(t, "listener_verification_failures_total", "reason", "denied_certificate"))
	pushStillArrives(t)
}

// clientWith is an mTLS client of the operator's listener presenting the
// given certificate.
func clientWith(t *testing.T, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	kp, err := tlsreload.NewKeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	pemData, err := op.PKI.TrustBundle(t.Context())
	require.NoError(t, err)
	roots, err := tlsreload.NewBundle(pemData)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: tlsreload.ClientConfig(kp, roots, "localhost")}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}
