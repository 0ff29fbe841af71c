package suite

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/e2e/harness"
)

// cmScenario is the cert-manager scenario's own harness (one runtime, the
// operator in cert-manager mode) and a client that knows cert-manager's kinds.
type cmScenario struct {
	h  *harness.Harness
	rt *harness.Runtime
	cm client.Client
}

func TestCertManagerIssuesReissuesAndRotatesTheCAWithoutLosingAWrite(t *testing.T) {
	if !h.Local {
		t.Skip("the scenario starts its own KCP with the cert-manager controllers (local mode)")
	}
	started := time.Now()
	s := startCertManagerHarness(t)
	t.Logf("harness in cert-manager mode up after %v", time.Since(started).Round(time.Second))

	step(t, "Given a Kyma with the sample module, whose agent certificate cert-manager issues")
	require.NoError(t, s.h.CreateKyma(t.Context(), s.rt, "regular", harness.SampleModule))
	s.eventuallyKyma(t, "Ready with the agent", func(k *v1beta2.Kyma) bool { return ready(k) && pushReady(k) })
	assert.Equal(t, "kcp-operator-ca", s.agentCertificate(t).Spec.IssuerRef.Name, "the chart's CA Issuer signs")
	caBefore := s.caCert(t)
	leaf := s.agentLeaf(t)
	assertChainsTo(t, leaf, caBefore, "the runtime's agent certificate chains to the CA cert-manager made")
	s.writeAndSee(t, "issued")

	step(t, "When its serial is denied, as an admin does with a leaked certificate")
	denied := time.Now()
	s.deny(t, leaf)
	require.Eventually(t, func() bool {
		l := s.agentLeaf(t)
		return l.SerialNumber.Cmp(leaf.SerialNumber) != 0
	}, timeout, tick, "the runtime's agent Secret gets a new certificate")
	t.Logf("denied → new certificate in the runtime: %v", time.Since(denied).Round(10*time.Millisecond))
	step(t, "Then cert-manager issues a new one from the same CA, and the agent's writes reach the KCP with it")
	s.agentCertificate(t)
	assertChainsTo(t, s.agentLeaf(t), caBefore, "the new certificate comes from the same CA")
	s.writeAndSee(t, "reissued")

	step(t, "When a CA rotation is requested in the middle of a stream of runtime writes")
	rotated := time.Now()
	writes := s.rotateUnderWrites(t, caBefore)
	step(t, "Then cert-manager made a new CA, the agent and the endpoint certificates come from it, and each of the %d writes reached the KCP", writes)
	t.Logf("CA rotation → endpoint on the new CA: %v", time.Since(rotated).Round(10*time.Millisecond))
	caAfter := s.caCert(t)
	require.False(t, caAfter.Equal(caBefore), "cert-manager re-issued the CA")
	assertChainsTo(t, s.agentLeaf(t), caAfter, "the agent certificate comes from the new CA")
	secret := s.agentSecret(t)
	bundle, err := pki.ParseCerts(secret.Data["ca.crt"])
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(bundle), 2, "the old CA stays trusted during the rotation")

	step(t, "And the API server refused none of the operator's requests in cert-manager mode")
	refused, err := s.h.RefusedRequests()
	require.NoError(t, err)
	assert.Empty(t, refused, "fix charts/kcp-operator/templates/rbac.yaml for certificates.backend=cert-manager")
	t.Logf("scenario took %v", time.Since(started).Round(time.Second))
}

func startCertManagerHarness(t *testing.T) *cmScenario {
	t.Helper()
	dir, err := os.MkdirTemp("", "lifecycle-manager-e2e-cert-manager-")
	require.NoError(t, err)
	ch, err := harness.New(context.WithoutCancel(t.Context()), harness.Options{
		RunDir: dir, CertManager: true,
		Progress: func(format string, args ...any) { t.Logf("cert-manager harness: "+format, args...) },
	})
	if ch != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("logs kept in %s:%s", dir, ch.Logs())
				if ch.CertManager != nil {
					t.Logf("----- cert-manager\n%s", ch.CertManager.Tail())
				}
			}
			ch.Close()
			if !t.Failed() {
				_ = os.RemoveAll(dir)
			}
		})
	}
	require.NoError(t, err, "the harness in cert-manager mode")
	scheme := testenv.NewScheme()
	require.NoError(t, cmv1.AddToScheme(scheme))
	cm, err := client.New(ch.KCP.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	return &cmScenario{h: ch, rt: ch.Runtimes[0], cm: cm}
}

func (s *cmScenario) eventuallyKyma(t *testing.T, what string, check func(*v1beta2.Kyma) bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		k := &v1beta2.Kyma{}
		err := s.h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: s.rt.KymaName}, k)
		return err == nil && check(k)
	}, timeout, tick, "Kyma %s %s", s.rt.KymaName, what)
}

// writeAndSee makes one runtime write and waits until the KCP has it.
func (s *cmScenario) writeAndSee(t *testing.T, value string) {
	t.Helper()
	require.NoError(t, writeControllerName(t.Context(), s.rt, value))
	s.eventuallyKyma(t, "shows write "+value, func(k *v1beta2.Kyma) bool {
		return len(k.Spec.Modules) > 0 && k.Spec.Modules[0].ControllerName == value
	})
}

func writeControllerName(ctx context.Context, rt *harness.Runtime, value string) error {
	for {
		k := &v1beta2.Kyma{}
		err := rt.Client.Get(ctx, client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: shared.DefaultRuntimeKymaName}, k)
		if err == nil && len(k.Spec.Modules) > 0 {
			k.Spec.Modules[0].ControllerName = value
			if err = rt.Client.Update(ctx, k); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("writing %q to the runtime Kyma: %w", value, ctx.Err()), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// agentCertificate is the operator's Certificate of the runtime's agent,
// once cert-manager reports it Ready.
func (s *cmScenario) agentCertificate(t *testing.T) *cmv1.Certificate {
	t.Helper()
	var found *cmv1.Certificate
	require.Eventually(t, func() bool {
		list := &cmv1.CertificateList{}
		if s.cm.List(t.Context(), list, client.InNamespace(harness.Namespace)) != nil {
			return false
		}
		i := slices.IndexFunc(list.Items, func(c cmv1.Certificate) bool { return c.Spec.CommonName == s.rt.RuntimeID })
		if i < 0 {
			return false
		}
		found = &list.Items[i]
		return slices.ContainsFunc(found.Status.Conditions, func(c cmv1.CertificateCondition) bool {
			return c.Type == cmv1.CertificateConditionReady && c.Status == cmmeta.ConditionTrue
		})
	}, timeout, tick, "a Ready cert-manager Certificate with common name %s", s.rt.RuntimeID)
	return found
}

// deny puts the certificate's serial on the operator's deny list, as an
// admin does with a leaked one: the listener refuses it and the operator
// has cert-manager issue the agent a new one.
func (s *cmScenario) deny(t *testing.T, leaf *x509.Certificate) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: harness.Namespace, Name: "lifecycle-manager-denied-certificates"},
		Data:       map[string][]byte{"serials": []byte(fmt.Sprintf("# the agent of %s, leaked\n%X\n", s.rt.RuntimeID, leaf.SerialNumber))},
	}
	require.NoError(t, s.h.KCP.Client.Create(t.Context(), secret))
}

// rotateUnderWrites requests a CA rotation at the third of a series of
// runtime writes, each of which must reach the KCP before the next, and
// writes on until the agent and the endpoint certificates both come from
// the new CA, and five writes more; it returns the number of writes.
func (s *cmScenario) rotateUnderWrites(t *testing.T, oldCA *x509.Certificate) int {
	t.Helper()
	writes, doneAt := 0, 0
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) && (doneAt == 0 || writes < doneAt+5) {
		writes++
		if writes == 3 {
			s.requestRotation(t)
		}
		s.writeAndSee(t, fmt.Sprintf("write-%d", writes))
		if doneAt == 0 && !issuedBy(s.agentLeaf(t), oldCA) && !issuedBy(s.endpointLeaf(t), oldCA) {
			doneAt = writes
		}
		time.Sleep(200 * time.Millisecond) // the pace of the runtime admin's stream of writes, not a wait for a result
	}
	require.NotZero(t, doneAt, "within 3 minutes the agent and the endpoint certificates come from a new CA")
	return writes
}

func (s *cmScenario) requestRotation(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		bundle := &corev1.Secret{}
		key := client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca-bundle"}
		if s.h.KCP.Client.Get(t.Context(), key, bundle) != nil {
			return false
		}
		if bundle.Annotations == nil {
			bundle.Annotations = map[string]string{}
		}
		bundle.Annotations[shared.RotateCAAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
		return s.h.KCP.Client.Update(t.Context(), bundle) == nil
	}, timeout, tick, "annotating the trust bundle for a CA rotation")
}

// caCert is the CA in the Secret the chart's CA Issuer signs with, which
// cert-manager wrote (it names its Certificate).
func (s *cmScenario) caCert(t *testing.T) *x509.Certificate {
	t.Helper()
	secret := &corev1.Secret{}
	require.NoError(t, s.h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-ca"}, secret))
	require.Equal(t, "kcp-operator-ca", secret.Annotations[cmv1.CertificateNameKey], "cert-manager wrote the CA Secret")
	certs, err := pki.ParseCerts(secret.Data[corev1.TLSCertKey])
	require.NoError(t, err)
	require.True(t, certs[0].IsCA)
	return certs[0]
}

func (s *cmScenario) agentSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	require.NoError(t, s.rt.Client.Get(t.Context(), client.ObjectKey{Namespace: "kyma-system", Name: "skr-agent-tls"}, secret))
	return secret
}

func (s *cmScenario) agentLeaf(t *testing.T) *x509.Certificate {
	t.Helper()
	return leafOf(t, s.agentSecret(t))
}

func (s *cmScenario) endpointLeaf(t *testing.T) *x509.Certificate {
	t.Helper()
	secret := &corev1.Secret{}
	require.NoError(t, s.h.KCP.Client.Get(t.Context(), client.ObjectKey{Namespace: harness.Namespace, Name: "lifecycle-manager-endpoint-tls"}, secret))
	return leafOf(t, secret)
}

func leafOf(t *testing.T, secret *corev1.Secret) *x509.Certificate {
	t.Helper()
	certs, err := pki.ParseCerts(secret.Data[corev1.TLSCertKey])
	require.NoError(t, err, "Secret %s/%s", secret.Namespace, secret.Name)
	return certs[0]
}

func issuedBy(leaf, ca *x509.Certificate) bool { return leaf.CheckSignatureFrom(ca) == nil }

func assertChainsTo(t *testing.T, leaf, ca *x509.Certificate, msg string) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err, msg)
}
