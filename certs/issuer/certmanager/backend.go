package certmanager

import (
	"context"
	"crypto/x509"
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
)

// Backend asks cert-manager for certificates. It implements issuer.Backend.
type Backend struct {
	c       client.Client
	opts    config.Options
	bundle  *trust.Store
	caKey   types.NamespacedName
	metrics *metrics.Metrics
	log     logr.Logger
}

var _ issuer.Backend = (*Backend)(nil)

// New returns the cert-manager backend. c's scheme must include
// cert-manager's v1 types; it needs access to Certificates and Secrets in
// opts.Namespace, to Secrets in the request namespaces, and to read the CA
// Secret.
func New(c client.Client, opts config.Options, m *metrics.Metrics, log logr.Logger) *Backend {
	return &Backend{
		c:       c,
		opts:    opts,
		bundle:  trust.NewStore(c, types.NamespacedName{Namespace: opts.Namespace, Name: opts.BundleSecret}, opts.TrustedCAFingerprints...),
		caKey:   types.NamespacedName{Namespace: opts.CASecretNamespaceOrDefault(), Name: opts.CASecret},
		metrics: m,
		log:     log,
	}
}

// Ensure keeps the Certificate for req current and copies a certificate
// that serves req from cert-manager's Secret into req.Secret, with the trust
// bundle. Until cert-manager delivered one, the result is Pending.
func (b *Backend) Ensure(ctx context.Context, req issuer.Request) (issuer.Result, error) {
	if err := req.Validate(); err != nil {
		return issuer.Result{}, err
	}
	now := b.opts.Clock()
	st, err := b.bundle.Load(ctx)
	if err != nil {
		return issuer.Result{}, err
	}
	target := req.Purpose.TargetCA(st, now, issuer.TimingOf(b.opts))
	cert, err := b.ensureCertificate(ctx, req)
	if err != nil {
		return issuer.Result{}, err
	}
	existing, err := issuer.GetSecret(ctx, b.c, req.Secret)
	if err != nil {
		return issuer.Result{}, err
	}
	cur := issuer.RawMaterial(existing)
	lt := issuer.LifetimeOf(b.opts)
	current := issuer.Evaluate(cur.Cert, cur.Key, req, st, target, now, lt)
	if current.Fine() {
		return b.write(ctx, req, existing, tlssecret.Material{Cert: cur.Cert, Key: cur.Key}, st, issuer.Result{})
	}
	issuedSecret, err := issuer.GetSecret(ctx, b.c, IssuedSecretKey(client.ObjectKeyFromObject(cert)))
	if err != nil {
		return issuer.Result{}, err
	}
	issued := issuer.RawMaterial(issuedSecret)
	candidate := issuer.Evaluate(issued.Cert, issued.Key, req, st, target, now, lt)
	// A certificate from a CA newer than the rotation wants (cert-manager
	// signs with its newest CA at once) waits while the current one is
	// merely due: its peers may not trust that CA yet.
	heldBack := candidate.Fine() && candidate.IssuerIndex > st.Index(target) &&
		current.Reason == issuer.ReasonExpiring && current.Usable(now)
	if candidate.Fine() && !heldBack {
		res := issuer.Result{Issued: true, Reason: current.Reason}
		return b.write(ctx, req, existing, tlssecret.Material{Cert: issued.Cert, Key: issued.Key}, st, res)
	}
	// A certificate from a CA that is not in the bundle yet waits for the
	// rotator; anything else cert-manager has to issue anew.
	if !candidate.Fine() {
		reissue, err := b.needsIssuance(ctx, candidate)
		if err != nil {
			return issuer.Result{}, err
		}
		if reissue {
			if err := b.requestIssuance(ctx, cert, candidate.Reason); err != nil {
				return issuer.Result{}, err
			}
		}
	}
	if !current.Usable(now) {
		return issuer.Result{Pending: true, Reason: current.Reason}, nil
	}
	res, err := b.write(ctx, req, existing, tlssecret.Material{Cert: cur.Cert, Key: cur.Key}, st, issuer.Result{})
	res.Pending, res.Reason = true, current.Reason
	return res, err
}

// needsIssuance reports whether cert-manager must issue anew to replace
// issued. An untrusted one that cert-manager's current CA signed waits for
// that CA to join the bundle; one of a CA that left the bundle (an
// emergency rotation drops the old CAs) is never trusted again.
func (b *Backend) needsIssuance(ctx context.Context, issued issuer.Verdict) (bool, error) {
	if issued.Reason != issuer.ReasonUntrusted || issued.Leaf == nil {
		return true, nil
	}
	ca, err := b.CurrentCA(ctx)
	if err != nil {
		return false, err
	}
	return issued.Leaf.CheckSignatureFrom(ca) != nil, nil
}

// write stores cert and key with the trust bundle in req.Secret (only what changed).
func (b *Backend) write(ctx context.Context, req issuer.Request, existing *corev1.Secret, m tlssecret.Material, st trust.State, res issuer.Result) (issuer.Result, error) {
	m.CABundle = st.PEM()
	changed, err := issuer.WriteSecret(ctx, b.c, req, existing, m)
	if err != nil {
		return issuer.Result{}, err
	}
	leaf, err := m.Leaf()
	if err != nil {
		return issuer.Result{}, err
	}
	res.Material, res.Changed, res.NotAfter = m, changed, leaf.NotAfter
	if res.Issued {
		b.metrics.Renewed(req.Purpose.MetricsKind(), string(res.Reason))
	}
	b.metrics.SetExpiry(req.Purpose.MetricsKind(), req.Secret.Namespace, req.Secret.Name, res.NotAfter)
	return res, nil
}

// Remove deletes req's Secret, the Certificate and cert-manager's Secret.
func (b *Backend) Remove(ctx context.Context, secret types.NamespacedName) error {
	key := CertificateKey(b.opts, secret)
	cert := &cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	if err := b.c.Delete(ctx, cert); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting certificate %s: %w", key, err)
	}
	if err := issuer.DeleteSecret(ctx, b.c, IssuedSecretKey(key)); err != nil {
		return err
	}
	if err := issuer.DeleteSecret(ctx, b.c, secret); err != nil {
		return err
	}
	for _, kind := range []string{metrics.KindAgent, metrics.KindEndpoint} {
		b.metrics.ForgetExpiry(kind, secret.Namespace, secret.Name)
	}
	return nil
}

// CurrentCA returns the CA in the issuer's Secret.
func (b *Backend) CurrentCA(ctx context.Context) (*x509.Certificate, error) {
	secret, err := issuer.GetSecret(ctx, b.c, b.caKey)
	if err != nil {
		return nil, err
	}
	if secret == nil {
		return nil, fmt.Errorf("CA secret %s of issuer %s not found: cert-manager has not issued the CA yet", b.caKey, b.opts.IssuerName)
	}
	cas, err := pki.ParseCerts(secret.Data[tlssecret.CertKey])
	if err != nil {
		return nil, fmt.Errorf("CA secret %s, %s: %w", b.caKey, tlssecret.CertKey, err)
	}
	if !cas[0].IsCA {
		return nil, fmt.Errorf("CA secret %s holds %q, which is not a CA", b.caKey, cas[0].Subject.CommonName)
	}
	return cas[0], nil
}

// RotateCA asks cert-manager to re-issue the Certificate of the CA Secret
// (named in its cert-manager.io/certificate-name annotation).
func (b *Backend) RotateCA(ctx context.Context) error {
	secret, err := issuer.GetSecret(ctx, b.c, b.caKey)
	if err != nil {
		return err
	}
	name := ""
	if secret != nil {
		name = secret.Annotations[cmv1.CertificateNameKey]
	}
	if name == "" {
		return fmt.Errorf("CA secret %s names no cert-manager Certificate: %w", b.caKey, issuer.ErrNotSupported)
	}
	var cert cmv1.Certificate
	if err := b.c.Get(ctx, types.NamespacedName{Namespace: b.caKey.Namespace, Name: name}, &cert); err != nil {
		return fmt.Errorf("reading CA certificate %s/%s: %w", b.caKey.Namespace, name, err)
	}
	if err := b.requestIssuance(ctx, &cert, "ca-rotation"); err != nil {
		return err
	}
	b.log.Info("asked cert-manager for a new CA", "certificate", b.caKey.Namespace+"/"+name)
	return nil
}
