package pushpki_test

import (
	"crypto/rsa"
	"crypto/x509"
	"net"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/issuer/certmanager"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
)

var agentDNS = []string{"skr-agent.kyma-system.svc", "skr-agent.kyma-system.svc.cluster.local"}

func TestIssueAgentCertificate(t *testing.T) {
	for _, alg := range []pki.KeyAlgorithm{pki.ECDSAP256, pki.RSA2048} {
		t.Run(string(alg), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, backend config.Backend) {
				testIssue(t, backend, alg)
			})
		})
	}
}

func testIssue(t *testing.T, backend config.Backend, alg pki.KeyAlgorithm) {
	f := newFixture(t, backend, fixtureOptions{change: func(o *config.Options) { o.KeyAlgorithm = alg }})
	kyma := f.newKyma("kyma-1", "runtime-1", "c-1.kyma.example.com")
	res := f.ensure(kyma)
	assert.True(t, res.Issued)
	assert.Equal(t, issuer.ReasonMissing, res.Reason)

	secret := f.secret("kyma-1-webhook-tls")
	stored, err := tlssecret.FromSecret(secret)
	require.NoError(t, err)
	assert.True(t, stored.Equal(res.Material), "the result is what the Secret holds")
	assert.Equal(t, "runtime-1", secret.Labels[shared.RuntimeIDLabel])
	assert.Equal(t, "kyma-1", secret.Labels[shared.KymaNameLabel])
	require.Len(t, secret.OwnerReferences, 1, "the Kyma owns its Secret, so the Secret goes with it")
	assert.Equal(t, kyma.Name, secret.OwnerReferences[0].Name)

	cert := leaf(t, res.Material)
	assert.Equal(t, "runtime-1", cert.Subject.CommonName, "CN is the runtime ID")
	assert.ElementsMatch(t, append(agentDNS, "c-1.kyma.example.com"), cert.DNSNames)
	require.Len(t, cert.IPAddresses, 1)
	assert.True(t, cert.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)))
	if alg == pki.RSA2048 {
		pub, ok := cert.PublicKey.(*rsa.PublicKey)
		require.True(t, ok, "want an RSA key, got %T", cert.PublicKey)
		assert.Equal(t, 2048, pub.N.BitLen())
	}
	roots := x509.NewCertPool()
	for _, ca := range bundleCAs(t, res.Material) {
		roots.AddCert(ca)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth} {
		_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}, DNSName: agentDNS[0]})
		assert.NoError(t, err, "one certificate is the agent's client and serving certificate (usage %v)", usage)
	}
	assert.WithinDuration(t, time.Now().Add(90*24*time.Hour), cert.NotAfter, 10*time.Minute)

	again, err := f.pki.EnsureKyma(t.Context(), f.kyma("kyma-1"))
	require.NoError(t, err)
	assert.False(t, again.Issued || again.Changed, "a current certificate is left alone")
	assert.Equal(t, secret.ResourceVersion, f.secret("kyma-1-webhook-tls").ResourceVersion)

	if backend == config.BackendCertManager {
		crt := f.certificate("kyma-1-webhook-tls")
		assert.Equal(t, "runtime-1", crt.Spec.CommonName)
		assert.ElementsMatch(t, append(agentDNS, "c-1.kyma.example.com"), crt.Spec.DNSNames)
		assert.Equal(t, []string{"127.0.0.1"}, crt.Spec.IPAddresses)
		assert.Equal(t, caName, crt.Spec.IssuerRef.Name)
		assert.Equal(t, "kyma-1-webhook-tls"+certmanager.IssuedSuffix, crt.Spec.SecretName)
		assert.Contains(t, crt.Spec.Usages, cmv1.UsageClientAuth)
		assert.Contains(t, crt.Spec.Usages, cmv1.UsageServerAuth)
		wantAlg := cmv1.ECDSAKeyAlgorithm
		if alg == pki.RSA2048 {
			wantAlg = cmv1.RSAKeyAlgorithm
		}
		assert.Equal(t, wantAlg, crt.Spec.PrivateKey.Algorithm)
	}

	n, err := testutil.GatherAndCount(f.reg, "lifecycle_manager_certificate_expiry_timestamp_seconds")
	require.NoError(t, err)
	assert.Equal(t, 3, n, "CA, endpoint and agent expiry")
	assert.InDelta(t, 1, renewals(t, f, "agent", "missing"), 0)
}

func revision(c *cmv1.Certificate) int {
	if c.Status.Revision == nil {
		return 0
	}
	return *c.Status.Revision
}

func renewals(t *testing.T, f *fixture, kind, reason string) float64 {
	t.Helper()
	families, err := f.reg.Gather()
	require.NoError(t, err)
	for _, fam := range families {
		if fam.GetName() != "lifecycle_manager_certificate_renewals_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestRenewNearExpiry: a certificate is renewed once it is inside its
// renewal window, with a new key, and then left alone. cert-manager renews
// on the real clock, so its certificates live seconds here.
func TestRenewNearExpiry(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{renewable: true})
		first := f.ensure(f.newKyma("kyma-1", "runtime-1", ""))

		if backend == config.BackendBuiltin {
			f.shift(59 * 24 * time.Hour)
		}
		res, err := f.pki.EnsureKyma(t.Context(), f.kyma("kyma-1"))
		require.NoError(t, err)
		assert.False(t, res.Issued || res.Pending, "before the renewal window")

		renewed := f.renewed("kyma-1", first)
		assert.Equal(t, issuer.ReasonExpiring, renewed.Reason)
		assert.NotEqual(t, leaf(t, first.Material).SerialNumber, leaf(t, renewed.Material).SerialNumber)
		// Renewed inside the window, the new certificate outlives the old
		// one by at least the time from issuance to the window (cert-manager
		// dates to the second).
		assert.False(t, renewed.NotAfter.Before(first.NotAfter.Add(f.opts.CertDuration-f.opts.CertRenewBefore-time.Second)),
			"the new certificate lives a full term from its renewal: %s, the first ended %s", renewed.NotAfter, first.NotAfter)
		assert.NotEqual(t, first.Material.Key, renewed.Material.Key, "a renewal brings a new key")

		after, err := f.pki.EnsureKyma(t.Context(), f.kyma("kyma-1"))
		require.NoError(t, err)
		assert.False(t, after.Issued, "renewed once, not again")
	})
}

func TestDeletedSecretIsRecreated(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{})
		f.ensure(f.newKyma("kyma-1", "runtime-1", ""))
		ctx := t.Context()

		require.NoError(t, kcp.Client.Delete(ctx, f.secret("kyma-1-webhook-tls")))
		res := f.ensure(f.kyma("kyma-1"))
		assert.True(t, res.Issued)
		assert.Equal(t, issuer.ReasonMissing, res.Reason)
		assert.True(t, f.material("kyma-1-webhook-tls").Equal(res.Material))

		endpoint := f.endpoint()
		require.NoError(t, kcp.Client.Delete(ctx, f.secret(f.opts.EndpointSecret)))
		f.settle()
		assert.Equal(t, leaf(t, endpoint).Subject.CommonName, leaf(t, f.endpoint()).Subject.CommonName, "the rotator re-creates the endpoint certificate")

		if backend != config.BackendCertManager {
			return
		}
		// Without cert-manager's Secret either, cert-manager issues anew
		// (its status counts each issuance as a revision).
		before := revision(f.certificate("kyma-1-webhook-tls"))
		require.NoError(t, kcp.Client.Delete(ctx, f.secret("kyma-1-webhook-tls")))
		require.NoError(t, kcp.Client.Delete(ctx, f.secret("kyma-1-webhook-tls"+certmanager.IssuedSuffix)))
		res = f.ensure(f.kyma("kyma-1"))
		assert.True(t, res.Issued)
		assert.Eventually(t, func() bool { return revision(f.certificate("kyma-1-webhook-tls")) > before },
			waitFor, 50*time.Millisecond, "cert-manager issued anew")
	})
}

func TestReissueOnIdentityChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{})
		f.ensure(f.newKyma("kyma-1", "runtime-1", "c-1.example.com"))

		f.updateKyma("kyma-1", func(k *v1beta2.Kyma) { k.Labels[shared.RuntimeIDLabel] = "runtime-2" })
		res := f.ensure(f.kyma("kyma-1"))
		assert.True(t, res.Issued)
		assert.Equal(t, issuer.ReasonIdentityChanged, res.Reason)
		assert.Equal(t, "runtime-2", leaf(t, res.Material).Subject.CommonName)
		assert.Equal(t, "runtime-2", f.secret("kyma-1-webhook-tls").Labels[shared.RuntimeIDLabel])

		f.updateKyma("kyma-1", func(k *v1beta2.Kyma) { k.Annotations[shared.SKRDomainAnnotation] = "c-2.example.com" })
		res = f.ensure(f.kyma("kyma-1"))
		assert.True(t, res.Issued)
		assert.ElementsMatch(t, append(agentDNS, "c-2.example.com"), leaf(t, res.Material).DNSNames)

		f.updateKyma("kyma-1", func(k *v1beta2.Kyma) { delete(k.Annotations, shared.SKRDomainAnnotation) })
		res = f.ensure(f.kyma("kyma-1"))
		assert.True(t, res.Issued)
		assert.ElementsMatch(t, agentDNS, leaf(t, res.Material).DNSNames)

		if backend == config.BackendCertManager {
			crt := f.certificate("kyma-1-webhook-tls")
			assert.Equal(t, "runtime-2", crt.Spec.CommonName)
			assert.ElementsMatch(t, agentDNS, crt.Spec.DNSNames)
		}
	})
}

func TestRemoveKyma(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		f := newFixture(t, backend, fixtureOptions{})
		f.ensure(f.newKyma("kyma-1", "runtime-1", ""))
		ctx := t.Context()

		require.NoError(t, f.pki.RemoveKyma(ctx, f.kyma("kyma-1")))
		type object struct {
			name string
			obj  client.Object
		}
		gone := []object{{"kyma-1-webhook-tls", &corev1.Secret{}}}
		if backend == config.BackendCertManager {
			gone = append(gone, object{"kyma-1-webhook-tls", &cmv1.Certificate{}},
				object{"kyma-1-webhook-tls" + certmanager.IssuedSuffix, &corev1.Secret{}})
		}
		// Eventually: cert-manager may write its Secret once more while the
		// Certificate is deleted; the garbage collector then removes it.
		assert.EventuallyWithT(t, func(c *assert.CollectT) {
			for _, g := range gone {
				err := kcp.Client.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: g.name}, g.obj)
				assert.True(c, apierrors.IsNotFound(err), "%T %s must be gone: %v", g.obj, g.name, err)
			}
		}, waitFor, 50*time.Millisecond)
		require.NoError(t, f.pki.RemoveKyma(ctx, f.kyma("kyma-1")), "removing twice is fine")
		n, err := testutil.GatherAndCount(f.reg, "lifecycle_manager_certificate_expiry_timestamp_seconds")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "only the CA and endpoint expiry remain")
	})
}

func TestBadInputGetsClearErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend config.Backend) {
		ctx := t.Context()
		f := newFixture(t, backend, fixtureOptions{noBootstrap: true})
		f.newKyma("kyma-1", "runtime-1", "")
		_, err := f.pki.EnsureKyma(ctx, f.kyma("kyma-1"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no trust bundle yet", "certificates wait for the first bundle")

		f.settle()
		f.ensure(f.kyma("kyma-1"))

		// A Secret whose certificate is garbage is replaced.
		secret := f.secret("kyma-1-webhook-tls")
		secret.Data[tlssecret.CertKey] = []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
		require.NoError(t, kcp.Client.Update(ctx, secret))
		res := f.ensure(f.kyma("kyma-1"))
		assert.True(t, res.Issued)
		assert.Equal(t, issuer.ReasonInvalid, res.Reason)

		// A domain that is no DNS name is refused, naming the annotation.
		f.newKyma("kyma-2", "runtime-2", "not a domain!")
		_, err = f.pki.EnsureKyma(ctx, f.kyma("kyma-2"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `skr-domain="not a domain!"`)

		// A trust bundle that does not parse stops everything, and stays for a human to see.
		bundle := f.secret(f.opts.BundleSecret)
		bundle.Data[tlssecret.CAKey] = []byte("garbage")
		require.NoError(t, kcp.Client.Update(ctx, bundle))
		_, err = f.pki.Rotator.Reconcile(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "trust bundle "+f.ns+"/"+f.opts.BundleSecret)
		_, err = f.pki.EnsureKyma(ctx, f.kyma("kyma-1"))
		assert.ErrorContains(t, err, "no certificate found")
		assert.Equal(t, []byte("garbage"), f.secret(f.opts.BundleSecret).Data[tlssecret.CAKey], "never overwritten")
	})
}

func TestBrokenCASecretIsNeverOverwritten(t *testing.T) {
	t.Run("builtin: key of another CA", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, config.BackendBuiltin, fixtureOptions{})
		ca := f.secret(f.opts.CASecret)
		otherKey, err := pki.GenerateKey(pki.ECDSAP256)
		require.NoError(t, err)
		ca.Data["tls.key"], err = pki.EncodeKey(otherKey)
		require.NoError(t, err)
		require.NoError(t, kcp.Client.Update(t.Context(), ca))

		_, err = f.pki.Rotator.Reconcile(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CA secret "+f.ns+"/"+f.opts.CASecret)
		assert.Contains(t, err.Error(), "does not match")
		_, err = f.pki.Rotator.Rotate(t.Context())
		assert.ErrorContains(t, err, "does not match", "no rotation away from a CA that does not parse")
		assert.Equal(t, ca.Data, f.secret(f.opts.CASecret).Data, "the CA Secret stays as it was")
	})
	t.Run("cert-manager: not a CA", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, config.BackendCertManager, fixtureOptions{})
		kymaCert := f.ensure(f.newKyma("kyma-1", "runtime-1", ""))
		ca := f.secret(caName)
		ca.Data["tls.crt"], ca.Data["tls.key"] = kymaCert.Material.Cert, kymaCert.Material.Key
		// cert-manager would put the CA back: keep it from seeing the
		// change by pointing the backend at a copy.
		ca.ResourceVersion, ca.Name, ca.OwnerReferences = "", "not-a-ca", nil
		require.NoError(t, kcp.Client.Create(t.Context(), ca))
		opts := f.opts
		opts.CASecret = "not-a-ca"
		p := f.newPKI(opts, nil)
		_, err := p.Rotator.Reconcile(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), `holds "runtime-1", which is not a CA`)

		opts.CASecret = "missing"
		_, err = f.newPKI(opts, nil).Rotator.Reconcile(t.Context())
		assert.ErrorContains(t, err, "CA secret "+f.ns+"/missing")
	})
}
