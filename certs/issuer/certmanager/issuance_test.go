package certmanager

import (
	"context"
	"sync"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/lifecycle-manager/api/testenv"
	"github.com/lifecycle-manager/certs/certmanagertest"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
)

// TestCertificateWritesSurviveCertManagersOwnStatusWrite runs against a real
// API server with cert-manager's CRDs (no controllers): the Certificate
// changes between our read and our write, as it does when cert-manager
// records its own status at the same moment.
func TestCertificateWritesSurviveCertManagersOwnStatusWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	crds, err := certmanagertest.CRDPaths(ctx)
	require.NoError(t, err)
	scheme := testenv.NewScheme()
	require.NoError(t, cmv1.AddToScheme(scheme))
	env, err := testenv.Start(testenv.Options{CRDPaths: crds, Scheme: scheme, WithoutAPICRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pki"}}))

	b := &Backend{c: c, opts: config.Options{Namespace: "pki"}, log: testr.New(t)}
	cert := &cmv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: "push-ca", Namespace: "pki"},
		Spec: cmv1.CertificateSpec{
			CommonName: "push-ca", SecretName: "push-ca", IsCA: true,
			IssuerRef: cmmeta.IssuerReference{Name: "selfsigned", Kind: "Issuer"},
		},
	}
	require.NoError(t, c.Create(ctx, cert))

	t.Run("a stale read is reread and the request lands", func(t *testing.T) {
		stale := cert.DeepCopy()
		readyNow(t, c, cert) // cert-manager's write in between
		require.NoError(t, b.requestIssuance(ctx, stale, "ca-rotation"))
		assert.Equal(t, cmmeta.ConditionTrue, issuing(t, c, cert))
		assert.Len(t, stored(t, c, cert).Status.Conditions, 2, "cert-manager's Ready condition is kept")
	})

	t.Run("an issuance that runs already is left alone", func(t *testing.T) {
		before := stored(t, c, cert)
		stale := cert.DeepCopy()
		stale.Status.Conditions = nil // read before the request above
		require.NoError(t, b.requestIssuance(ctx, stale, "expiring"))
		assert.Equal(t, before.ResourceVersion, stored(t, c, cert).ResourceVersion, "no second write")
	})

	t.Run("a spec change written after cert-manager's status write lands", func(t *testing.T) {
		req := issuer.Request{Secret: types.NamespacedName{Namespace: "pki", Name: "endpoint"}, Purpose: issuer.PurposeEndpoint,
			CommonName: "listener", DNSNames: []string{"listener.old"}}
		_, err := b.ensureCertificate(ctx, req)
		require.NoError(t, err)
		created := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Namespace: "pki", Name: "endpoint"}}
		// cert-manager writes its status between our read and our write.
		racing := &Backend{c: statusWriteAfterFirstGet(t, c), opts: b.opts, log: b.log}
		req.DNSNames = []string{"listener.new"}
		_, err = racing.ensureCertificate(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, []string{"listener.new"}, stored(t, c, created).Spec.DNSNames)
	})
}

// statusWriteAfterFirstGet is c, where the first Get of a Certificate is
// followed by a status write of it, as cert-manager's would be.
func statusWriteAfterFirstGet(t *testing.T, c client.WithWatch) client.Client {
	t.Helper()
	var once sync.Once
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if cert, ok := obj.(*cmv1.Certificate); ok {
				once.Do(func() { readyNow(t, c, cert) })
			}
			return nil
		},
	})
}

// readyNow writes a Ready condition to cert's status, as cert-manager does.
func readyNow(t *testing.T, c client.Client, cert *cmv1.Certificate) {
	t.Helper()
	now := metav1.Now()
	fresh := stored(t, c, cert)
	fresh.Status.Conditions = append(fresh.Status.Conditions, cmv1.CertificateCondition{
		Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionTrue, Reason: "Ready", LastTransitionTime: &now,
	})
	require.NoError(t, c.Status().Update(context.Background(), fresh))
}

func stored(t *testing.T, c client.Client, cert *cmv1.Certificate) *cmv1.Certificate {
	t.Helper()
	var got cmv1.Certificate
	require.NoError(t, c.Get(context.Background(), client.ObjectKeyFromObject(cert), &got))
	return &got
}

func issuing(t *testing.T, c client.Client, cert *cmv1.Certificate) cmmeta.ConditionStatus {
	t.Helper()
	for _, cond := range stored(t, c, cert).Status.Conditions {
		if cond.Type == cmv1.CertificateConditionIssuing {
			return cond.Status
		}
	}
	return ""
}
