package certmanager

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/certs/issuer"
	"github.com/lifecycle-manager/certs/pki"
)

// IssuedSuffix ends the name of the Secret that cert-manager writes.
const IssuedSuffix = "-issued"

// PurposeIssued is the value of shared.PurposeLabel on cert-manager's Secrets.
const PurposeIssued = "cert-manager-issued"

// CertificateKey returns the Certificate for a request's Secret: in the PKI
// namespace (where a namespaced Issuer lives), named like the Secret, with
// the Secret's namespace in front when that differs.
func CertificateKey(opts config.Options, secret types.NamespacedName) types.NamespacedName {
	name := secret.Name
	if secret.Namespace != opts.Namespace {
		name = secret.Namespace + "." + secret.Name
	}
	return types.NamespacedName{Namespace: opts.Namespace, Name: name}
}

// IssuedSecretKey returns the Secret cert-manager writes for a Certificate.
func IssuedSecretKey(cert types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: cert.Namespace, Name: cert.Name + IssuedSuffix}
}

func (b *Backend) desiredSpec(req issuer.Request, issued string) cmv1.CertificateSpec {
	ips := make([]string, len(req.IPs))
	for i, ip := range req.IPs {
		ips[i] = ip.String()
	}
	usages := []cmv1.KeyUsage{cmv1.UsageDigitalSignature, cmv1.UsageKeyEncipherment, cmv1.UsageServerAuth}
	if req.Purpose.Usage()&pki.UsageClient != 0 {
		usages = append(usages, cmv1.UsageClientAuth)
	}
	key := &cmv1.CertificatePrivateKey{
		RotationPolicy: cmv1.RotationPolicyAlways, Encoding: cmv1.PKCS8,
		Algorithm: cmv1.ECDSAKeyAlgorithm, Size: 256,
	}
	switch b.opts.KeyAlgorithm {
	case pki.RSA2048:
		key.Algorithm, key.Size = cmv1.RSAKeyAlgorithm, 2048
	case pki.RSA4096:
		key.Algorithm, key.Size = cmv1.RSAKeyAlgorithm, 4096
	}
	history := int32(1) // one CertificateRequest per Certificate is enough; thousands of runtimes add up
	return cmv1.CertificateSpec{
		CommonName:  req.CommonName,
		DNSNames:    req.DNSNames,
		IPAddresses: ips,
		SecretName:  issued,
		SecretTemplate: &cmv1.CertificateSecretTemplate{Labels: map[string]string{
			shared.PurposeLabel: PurposeIssued, shared.ManagedByLabel: shared.OperatorName,
		}},
		IssuerRef:            cmmeta.IssuerReference{Name: b.opts.IssuerName, Kind: b.opts.IssuerKind, Group: b.opts.IssuerGroup},
		Duration:             &metav1.Duration{Duration: b.opts.CertDuration},
		RenewBefore:          &metav1.Duration{Duration: b.opts.CertRenewBefore},
		Usages:               usages,
		PrivateKey:           key,
		RevisionHistoryLimit: &history,
	}
}

// ensureCertificate creates the Certificate or brings its spec and labels
// up to date; it returns the object as stored.
func (b *Backend) ensureCertificate(ctx context.Context, req issuer.Request) (*cmv1.Certificate, error) {
	key := CertificateKey(b.opts, req.Secret)
	issued := IssuedSecretKey(key)
	if errs := validation.IsDNS1123Subdomain(issued.Name); len(errs) > 0 {
		return nil, fmt.Errorf("cannot name a Certificate for secret %s: %q: %v", req.Secret, issued.Name, errs)
	}
	labels := map[string]string{
		shared.PurposeLabel: req.Purpose.PurposeLabelValue(), shared.ManagedByLabel: shared.OperatorName,
	}
	maps.Copy(labels, req.Labels)
	spec := b.desiredSpec(req, issued.Name)

	var cert cmv1.Certificate
	// cert-manager writes the status at any moment: a conflict rereads.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := b.c.Get(ctx, key, &cert)
		if apierrors.IsNotFound(err) {
			cert = cmv1.Certificate{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels}, Spec: spec}
			if err := b.own(req, &cert); err != nil {
				return err
			}
			return b.c.Create(ctx, &cert)
		}
		if err != nil {
			return err
		}
		before := cert.DeepCopy()
		cert.Spec = spec
		if cert.Labels == nil {
			cert.Labels = map[string]string{}
		}
		maps.Copy(cert.Labels, labels)
		if err := b.own(req, &cert); err != nil {
			return err
		}
		if apiequality.Semantic.DeepEqual(before.Spec, cert.Spec) && apiequality.Semantic.DeepEqual(before.ObjectMeta, cert.ObjectMeta) {
			return nil
		}
		return b.c.Update(ctx, &cert)
	})
	if err != nil {
		return nil, fmt.Errorf("ensuring certificate %s: %w", key, err)
	}
	return &cert, nil
}

func (b *Backend) own(req issuer.Request, cert *cmv1.Certificate) error {
	if req.Owner == nil || req.Owner.GetNamespace() != cert.Namespace {
		return nil // owner references cannot cross namespaces; Remove cleans up
	}
	if err := controllerutil.SetControllerReference(req.Owner, cert, b.c.Scheme()); err != nil {
		return fmt.Errorf("owning certificate %s/%s: %w", cert.Namespace, cert.Name, err)
	}
	return nil
}

// requestIssuance asks cert-manager to issue now, as `cmctl renew` does,
// unless an issuance already runs. cert-manager writes the same status, so
// a conflict rereads the Certificate and decides again.
func (b *Backend) requestIssuance(ctx context.Context, cert *cmv1.Certificate, why issuer.Reason) error {
	key := client.ObjectKeyFromObject(cert)
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := b.c.Get(ctx, key, cert); err != nil {
				return err
			}
		}
		first = false
		if !b.markIssuing(cert, why) {
			return nil // cert-manager is at it
		}
		return b.c.Status().Update(ctx, cert)
	})
	if err != nil {
		return fmt.Errorf("requesting issuance of certificate %s: %w", key, err)
	}
	b.log.V(1).Info("requested issuance", "certificate", key.String(), "reason", why)
	return nil
}

// markIssuing sets cert's Issuing condition to True; it reports false when
// it already was.
func (b *Backend) markIssuing(cert *cmv1.Certificate, why issuer.Reason) bool {
	now := metav1.NewTime(b.opts.Clock().Truncate(time.Second))
	cond := cmv1.CertificateCondition{
		Type: cmv1.CertificateConditionIssuing, Status: cmmeta.ConditionTrue,
		Reason:             "ManuallyTriggered",
		Message:            "Re-issuance requested by lifecycle-manager: " + string(why),
		LastTransitionTime: &now, ObservedGeneration: cert.Generation,
	}
	i := slices.IndexFunc(cert.Status.Conditions, func(c cmv1.CertificateCondition) bool {
		return c.Type == cmv1.CertificateConditionIssuing
	})
	switch {
	case i < 0:
		cert.Status.Conditions = append(cert.Status.Conditions, cond)
	case cert.Status.Conditions[i].Status == cmmeta.ConditionTrue:
		return false
	default:
		cert.Status.Conditions[i] = cond
	}
	return true
}
