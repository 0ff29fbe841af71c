package builtin

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/pki"
	"github.com/lifecycle-manager/certs/tlssecret"
	"github.com/lifecycle-manager/certs/trust"
)

// Backend signs with the CA in the CA Secret. It implements issuer.Backend.
type Backend struct {
	c       client.Client
	opts    config.Options
	bundle  *trust.Store
	cas     *caStore
	metrics *metrics.Metrics
	log     logr.Logger
}

var _ issuer.Backend = (*Backend)(nil)

// New returns the built-in backend. c needs read and write access to Secrets
// in opts.Namespace and in the namespaces of the certificate Secrets.
func New(c client.Client, opts config.Options, m *metrics.Metrics, log logr.Logger) *Backend {
	return &Backend{
		c:       c,
		opts:    opts,
		bundle:  trust.NewStore(c, types.NamespacedName{Namespace: opts.Namespace, Name: opts.BundleSecret}, opts.TrustedCAFingerprints...),
		cas:     &caStore{c: c, key: types.NamespacedName{Namespace: opts.CASecretNamespaceOrDefault(), Name: opts.CASecret}},
		metrics: m,
		log:     log,
	}
}

// CurrentCA returns the newest CA, creating the CA Secret on first use.
func (b *Backend) CurrentCA(ctx context.Context) (*x509.Certificate, error) {
	cas, _, err := b.cas.load(ctx)
	if errors.Is(err, errNoCA) {
		b.log.Info("creating the first CA", "secret", b.cas.key)
		return b.cas.create(ctx, b.opts.KeyAlgorithm, b.opts.Clock(), b.opts.CADuration)
	}
	if err != nil {
		return nil, err
	}
	return cas[0].Cert, nil
}

// RotateCA creates a new CA; the current one stays as the previous.
func (b *Backend) RotateCA(ctx context.Context) error {
	ca, err := b.cas.rotate(ctx, b.opts.KeyAlgorithm, b.opts.Clock(), b.opts.CADuration)
	if err != nil {
		return err
	}
	b.log.Info("created a new CA", "secret", b.cas.key, "ca", ca.Subject.CommonName, "notAfter", ca.NotAfter)
	return nil
}

// Ensure signs a new certificate when the Secret's does not serve req, and
// keeps its ca.crt equal to the trust bundle.
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
	existing, err := issuer.GetSecret(ctx, b.c, req.Secret)
	if err != nil {
		return issuer.Result{}, err
	}
	cur := issuer.RawMaterial(existing)
	v := issuer.Evaluate(cur.Cert, cur.Key, req, st, target, now, issuer.LifetimeOf(b.opts))
	res := issuer.Result{Material: tlssecret.Material{CABundle: st.PEM(), Cert: cur.Cert, Key: cur.Key}}
	if !v.Fine() {
		if v.Err != nil {
			b.log.Info("replacing an unreadable certificate", "secret", req.Secret, "error", v.Err.Error())
		}
		if res.Material, err = b.sign(ctx, req, st, target); err != nil {
			return issuer.Result{}, err
		}
		res.Issued, res.Reason = true, v.Reason
	}
	// WriteSecret writes only what changed: a new certificate, a new bundle,
	// or labels and owner.
	if res.Changed, err = issuer.WriteSecret(ctx, b.c, req, existing, res.Material); err != nil {
		return issuer.Result{}, err
	}
	leaf, err := res.Material.Leaf()
	if err != nil {
		return issuer.Result{}, err
	}
	res.NotAfter = leaf.NotAfter
	if res.Issued {
		b.metrics.Renewed(req.Purpose.MetricsKind(), string(res.Reason))
	}
	b.metrics.SetExpiry(req.Purpose.MetricsKind(), req.Secret.Namespace, req.Secret.Name, res.NotAfter)
	return res, nil
}

func (b *Backend) sign(ctx context.Context, req issuer.Request, st trust.State, target *x509.Certificate) (tlssecret.Material, error) {
	ca, err := b.cas.signer(ctx, target)
	if err != nil {
		return tlssecret.Material{}, err
	}
	certPEM, keyPEM, err := ca.Issue(pki.LeafRequest{
		CommonName: req.CommonName, DNSNames: req.DNSNames, IPs: req.IPs,
		Usage: req.Purpose.Usage(), NotBefore: b.opts.Clock(), Duration: b.opts.CertDuration,
	}, b.opts.KeyAlgorithm)
	if err != nil {
		return tlssecret.Material{}, fmt.Errorf("issuing certificate for %s: %w", req.Secret, err)
	}
	return tlssecret.Material{CABundle: st.PEM(), Cert: certPEM, Key: keyPEM}, nil
}

// Remove deletes the Secret.
func (b *Backend) Remove(ctx context.Context, secret types.NamespacedName) error {
	if err := issuer.DeleteSecret(ctx, b.c, secret); err != nil {
		return err
	}
	for _, kind := range []string{metrics.KindAgent, metrics.KindEndpoint} {
		b.metrics.ForgetExpiry(kind, secret.Namespace, secret.Name)
	}
	return nil
}
