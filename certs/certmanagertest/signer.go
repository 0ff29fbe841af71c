package certmanagertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/certs/pki"
)

// resync is how often every Certificate is looked at besides watch events:
// cert-manager also reacts to deleted Secrets and to renewal times.
const resync = 200 * time.Millisecond

// FakeCertManagerSigner plays cert-manager's part in tests: it watches
// Certificate objects and, when one needs issuance (its Secret is missing,
// invalid or does not match the spec, its renewal time came, or its Issuing
// condition is True), signs a certificate with the referenced Issuer
// (selfSigned for CA Certificates, or ca) and writes the Secret and the
// status the way cert-manager does. It is a test double, not cert-manager:
// no CertificateRequests, no ACME, no key reuse. Unlike cert-manager, it
// does not renew a certificate that its CA cannot give a longer life (one cut
// to a CA's expiry): cert-manager would re-issue it over and over.
type FakeCertManagerSigner struct {
	c   client.WithWatch
	log logr.Logger
	// ClusterResourceNamespace holds the CA Secrets of ClusterIssuers.
	ClusterResourceNamespace string
	// Namespace, when set, limits the signer to Certificates there, so that
	// parallel tests each have their own.
	Namespace string
	// Now is the signer's clock for renewal and for the validity of what it
	// signs; nil means time.Now.
	Now func() time.Time

	mu        sync.Mutex
	issuances map[types.NamespacedName]int
}

// NewFakeCertManagerSigner returns a signer on c.
func NewFakeCertManagerSigner(c client.WithWatch, log logr.Logger) *FakeCertManagerSigner {
	return &FakeCertManagerSigner{c: c, log: log, ClusterResourceNamespace: "cert-manager", issuances: map[types.NamespacedName]int{}}
}

// Issuances returns how often the Certificate was issued.
func (s *FakeCertManagerSigner) Issuances(cert types.NamespacedName) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issuances[cert]
}

// Start signs until ctx ends.
func (s *FakeCertManagerSigner) Start(ctx context.Context) error {
	tick := time.NewTicker(resync)
	defer tick.Stop()
	for ctx.Err() == nil {
		w, err := s.c.Watch(ctx, &cmv1.CertificateList{}, client.InNamespace(s.Namespace))
		if err != nil {
			s.log.Error(err, "watching certificates")
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
			continue
		}
		s.serve(ctx, w, tick.C)
		w.Stop()
	}
	return nil
}

func (s *FakeCertManagerSigner) serve(ctx context.Context, w watch.Interface, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if err := s.SyncAll(ctx); err != nil && ctx.Err() == nil {
				s.log.Error(err, "signing")
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if cert, isCert := ev.Object.(*cmv1.Certificate); isCert && ev.Type != watch.Deleted {
				if err := s.Sync(ctx, client.ObjectKeyFromObject(cert)); err != nil && ctx.Err() == nil {
					s.log.Error(err, "signing", "certificate", client.ObjectKeyFromObject(cert))
				}
			}
		}
	}
}

// SyncAll looks at every Certificate once.
func (s *FakeCertManagerSigner) SyncAll(ctx context.Context) error {
	var certs cmv1.CertificateList
	if err := s.c.List(ctx, &certs, client.InNamespace(s.Namespace)); err != nil {
		return fmt.Errorf("listing certificates: %w", err)
	}
	var errs []error
	for i := range certs.Items {
		errs = append(errs, s.Sync(ctx, client.ObjectKeyFromObject(&certs.Items[i])))
	}
	return errors.Join(errs...)
}

// Sync issues the Certificate if it needs issuance.
func (s *FakeCertManagerSigner) Sync(ctx context.Context, key types.NamespacedName) error {
	if s.Namespace != "" && key.Namespace != s.Namespace {
		return nil
	}
	var cert cmv1.Certificate
	if err := s.c.Get(ctx, key, &cert); err != nil {
		return client.IgnoreNotFound(err)
	}
	var secret corev1.Secret
	err := s.c.Get(ctx, types.NamespacedName{Namespace: cert.Namespace, Name: cert.Spec.SecretName}, &secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	sign, caPEM, caNotAfter, err := s.signer(ctx, &cert)
	if err != nil {
		return err
	}
	reason := needsIssuance(&cert, &secret, exists, s.now(), caNotAfter)
	if reason == "" {
		return nil
	}
	certPEM, keyPEM, err := sign()
	if err != nil {
		return fmt.Errorf("signing %s: %w", key, err)
	}
	if caPEM == nil {
		caPEM = certPEM // self-signed
	}
	if err := s.writeSecret(ctx, &cert, &secret, exists, certPEM, keyPEM, caPEM); err != nil {
		return err
	}
	if gone, err := s.collectOrphan(ctx, &cert); gone || err != nil {
		return err
	}
	if err := s.writeStatus(ctx, &cert, certPEM); err != nil {
		return err
	}
	s.mu.Lock()
	s.issuances[key]++
	s.mu.Unlock()
	s.log.V(1).Info("issued", "certificate", key, "reason", reason)
	return nil
}

// needsIssuance mirrors cert-manager's trigger policies that matter here.
func (s *FakeCertManagerSigner) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func needsIssuance(cert *cmv1.Certificate, secret *corev1.Secret, exists bool, now, caNotAfter time.Time) string {
	for _, c := range cert.Status.Conditions {
		if c.Type == cmv1.CertificateConditionIssuing && c.Status == cmmeta.ConditionTrue {
			return "Issuing"
		}
	}
	if !exists {
		return "DoesNotExist"
	}
	certs, err := pki.ParseCerts(secret.Data[corev1.TLSCertKey])
	if err != nil {
		return "InvalidCertificate"
	}
	key, err := pki.ParseKey(secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil || pki.KeyMatches(certs[0], key) != nil {
		return "InvalidKeyPair"
	}
	leaf := certs[0]
	ips := make([]string, len(leaf.IPAddresses))
	for i, ip := range leaf.IPAddresses {
		ips[i] = ip.String()
	}
	if leaf.Subject.CommonName != cert.Spec.CommonName || leaf.IsCA != cert.Spec.IsCA ||
		!sameSet(leaf.DNSNames, cert.Spec.DNSNames) || !sameSet(ips, cert.Spec.IPAddresses) {
		return "SecretMismatch"
	}
	if secret.Annotations[cmv1.IssuerNameAnnotationKey] != cert.Spec.IssuerRef.Name {
		return "IncorrectIssuer"
	}
	if !now.Before(leaf.NotAfter.Add(-renewBefore(cert))) && longerLife(leaf.NotAfter, now.Add(duration(cert)), caNotAfter) {
		return "Renewing"
	}
	return ""
}

// longerLife reports whether a certificate issued now would outlive current.
func longerLife(current, wanted, caNotAfter time.Time) bool {
	if !caNotAfter.IsZero() && caNotAfter.Before(wanted) {
		wanted = caNotAfter
	}
	return wanted.After(current)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func duration(cert *cmv1.Certificate) time.Duration {
	if cert.Spec.Duration != nil {
		return cert.Spec.Duration.Duration
	}
	return cmv1.DefaultCertificateDuration
}

func renewBefore(cert *cmv1.Certificate) time.Duration {
	if cert.Spec.RenewBefore != nil && cert.Spec.RenewBefore.Duration < duration(cert) {
		return cert.Spec.RenewBefore.Duration
	}
	return duration(cert) / 3
}

// signer returns a function that issues for cert with its issuer, and the
// issuer's CA certificate and its expiry (nil and zero when self-signed).
func (s *FakeCertManagerSigner) signer(ctx context.Context, cert *cmv1.Certificate) (func() ([]byte, []byte, error), []byte, time.Time, error) {
	spec, caNamespace, err := s.issuerSpec(ctx, cert)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	alg := keyAlgorithm(cert.Spec.PrivateKey)
	switch {
	case spec.SelfSigned != nil:
		if !cert.Spec.IsCA {
			return nil, nil, time.Time{}, fmt.Errorf("certificate %s/%s: the fake signer self-signs CAs only", cert.Namespace, cert.Name)
		}
		return func() ([]byte, []byte, error) {
			key, err := pki.GenerateKey(alg)
			if err != nil {
				return nil, nil, err
			}
			ca, err := pki.NewCA(cert.Spec.CommonName, key, s.now(), duration(cert))
			if err != nil {
				return nil, nil, err
			}
			return ca.PEM()
		}, nil, time.Time{}, nil
	case spec.CA != nil:
		var caSecret corev1.Secret
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: caNamespace, Name: spec.CA.SecretName}, &caSecret); err != nil {
			return nil, nil, time.Time{}, fmt.Errorf("CA secret of issuer %s: %w", cert.Spec.IssuerRef.Name, err)
		}
		ca, err := pki.ParseCA(caSecret.Data[corev1.TLSCertKey], caSecret.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return nil, nil, time.Time{}, fmt.Errorf("CA secret of issuer %s: %w", cert.Spec.IssuerRef.Name, err)
		}
		issue := func() ([]byte, []byte, error) { return issueLeaf(ca, cert, alg, s.now()) }
		return issue, pki.EncodeCerts(ca.Cert), ca.Cert.NotAfter, nil
	default:
		return nil, nil, time.Time{}, fmt.Errorf("issuer %s: the fake signer knows selfSigned and ca issuers only", cert.Spec.IssuerRef.Name)
	}
}

func issueLeaf(ca *pki.CA, cert *cmv1.Certificate, alg pki.KeyAlgorithm, now time.Time) ([]byte, []byte, error) {
	req := pki.LeafRequest{CommonName: cert.Spec.CommonName, DNSNames: cert.Spec.DNSNames, NotBefore: now, Duration: duration(cert)}
	for _, ip := range cert.Spec.IPAddresses {
		req.IPs = append(req.IPs, net.ParseIP(ip))
	}
	for _, u := range cert.Spec.Usages {
		switch u {
		case cmv1.UsageClientAuth:
			req.Usage |= pki.UsageClient
		case cmv1.UsageServerAuth:
			req.Usage |= pki.UsageServer
		}
	}
	if req.Usage == 0 {
		req.Usage = pki.UsageServer
	}
	return ca.Issue(req, alg)
}

func (s *FakeCertManagerSigner) issuerSpec(ctx context.Context, cert *cmv1.Certificate) (cmv1.IssuerSpec, string, error) {
	ref := cert.Spec.IssuerRef
	if ref.Kind == "ClusterIssuer" {
		var ci cmv1.ClusterIssuer
		if err := s.c.Get(ctx, types.NamespacedName{Name: ref.Name}, &ci); err != nil {
			return cmv1.IssuerSpec{}, "", fmt.Errorf("cluster issuer %s: %w", ref.Name, err)
		}
		return ci.Spec, s.ClusterResourceNamespace, nil
	}
	var is cmv1.Issuer
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: cert.Namespace, Name: ref.Name}, &is); err != nil {
		return cmv1.IssuerSpec{}, "", fmt.Errorf("issuer %s/%s: %w", cert.Namespace, ref.Name, err)
	}
	return is.Spec, cert.Namespace, nil
}

func keyAlgorithm(k *cmv1.CertificatePrivateKey) pki.KeyAlgorithm {
	if k != nil && k.Algorithm == cmv1.RSAKeyAlgorithm {
		if k.Size == 4096 {
			return pki.RSA4096
		}
		return pki.RSA2048
	}
	return pki.ECDSAP256
}

func (s *FakeCertManagerSigner) writeSecret(ctx context.Context, cert *cmv1.Certificate, secret *corev1.Secret, exists bool, certPEM, keyPEM, caPEM []byte) error {
	if !exists {
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: cert.Spec.SecretName, Namespace: cert.Namespace,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cert, cmv1.SchemeGroupVersion.WithKind(cmv1.CertificateKind))},
			},
			Type: corev1.SecretTypeTLS,
		}
	}
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	if t := cert.Spec.SecretTemplate; t != nil {
		for k, v := range t.Labels {
			secret.Labels[k] = v
		}
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	for k, v := range map[string]string{
		cmv1.CertificateNameKey:       cert.Name,
		cmv1.IssuerNameAnnotationKey:  cert.Spec.IssuerRef.Name,
		cmv1.IssuerKindAnnotationKey:  cert.Spec.IssuerRef.Kind,
		cmv1.IssuerGroupAnnotationKey: cert.Spec.IssuerRef.Group,
		cmv1.CommonNameAnnotationKey:  cert.Spec.CommonName,
		cmv1.AltNamesAnnotationKey:    strings.Join(cert.Spec.DNSNames, ","),
		cmv1.IPSANAnnotationKey:       strings.Join(cert.Spec.IPAddresses, ","),
	} {
		secret.Annotations[k] = v
	}
	secret.Data = map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, cmmeta.TLSCAKey: caPEM}
	var err error
	if exists {
		err = s.c.Update(ctx, secret)
	} else {
		err = s.c.Create(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("writing secret of certificate %s/%s: %w", cert.Namespace, cert.Name, err)
	}
	return nil
}

// collectOrphan deletes the Secret just written when its Certificate was
// deleted while it was being issued. cert-manager's Secret carries an owner
// reference to its Certificate, so a cluster's garbage collector removes
// such a Secret; envtest runs no garbage collector.
func (s *FakeCertManagerSigner) collectOrphan(ctx context.Context, cert *cmv1.Certificate) (bool, error) {
	err := s.c.Get(ctx, client.ObjectKeyFromObject(cert), &cmv1.Certificate{})
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cert.Spec.SecretName, Namespace: cert.Namespace}}
	if err := s.c.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		return true, fmt.Errorf("collecting the secret of deleted certificate %s/%s: %w", cert.Namespace, cert.Name, err)
	}
	return true, nil
}

// writeStatus records the issuance; a conflict (someone else wrote the
// status meanwhile) is retried on the latest version, as a controller would.
func (s *FakeCertManagerSigner) writeStatus(ctx context.Context, cert *cmv1.Certificate, certPEM []byte) error {
	certs, err := pki.ParseCerts(certPEM)
	if err != nil {
		return err
	}
	leaf := certs[0]
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(cert), cert); err != nil {
			return err
		}
		now := metav1.NewTime(s.now())
		revision := 1
		if cert.Status.Revision != nil {
			revision = *cert.Status.Revision + 1
		}
		notBefore, notAfter := metav1.NewTime(leaf.NotBefore), metav1.NewTime(leaf.NotAfter)
		renewal := metav1.NewTime(leaf.NotAfter.Add(-renewBefore(cert)))
		cert.Status.NotBefore, cert.Status.NotAfter, cert.Status.RenewalTime = &notBefore, &notAfter, &renewal
		cert.Status.Revision = &revision
		cert.Status.Conditions = slices.DeleteFunc(cert.Status.Conditions, func(c cmv1.CertificateCondition) bool {
			return c.Type == cmv1.CertificateConditionIssuing || c.Type == cmv1.CertificateConditionReady
		})
		cert.Status.Conditions = append(cert.Status.Conditions, cmv1.CertificateCondition{
			Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionTrue, Reason: "Ready",
			Message: "Certificate is up to date and has not expired", LastTransitionTime: &now, ObservedGeneration: cert.Generation,
		})
		return s.c.Status().Update(ctx, cert)
	})
	if err != nil {
		return fmt.Errorf("status of certificate %s/%s: %w", cert.Namespace, cert.Name, err)
	}
	return nil
}
