package issuer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/tlssecret"
)

// PurposeLabelValue is the value of shared.PurposeLabel on a certificate Secret.
func (p Purpose) PurposeLabelValue() string { return string(p) + "-tls" }

// MetricsKind is the "kind" label of the purpose's metrics.
func (p Purpose) MetricsKind() string {
	if p == PurposeEndpoint {
		return metrics.KindEndpoint
	}
	return metrics.KindAgent
}

// GetSecret returns the Secret, or nil when it does not exist.
func GetSecret(ctx context.Context, c client.Reader, key types.NamespacedName) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := c.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading secret %s: %w", key, err)
	}
	return &s, nil
}

// RawMaterial is the Secret's content as it is, unvalidated; zero for nil.
func RawMaterial(s *corev1.Secret) tlssecret.Material {
	if s == nil {
		return tlssecret.Material{}
	}
	return tlssecret.Material{CABundle: s.Data[tlssecret.CAKey], Cert: s.Data[tlssecret.CertKey], Key: s.Data[tlssecret.KeyKey]}
}

// WriteSecret puts m into req.Secret: it creates existing when nil, else
// updates it at the resourceVersion it was read at, so that a concurrent
// writer gets a conflict instead of being overwritten. It writes nothing
// when the Secret already holds m with its labels and owner.
func WriteSecret(ctx context.Context, c client.Client, req Request, existing *corev1.Secret, m tlssecret.Material) (bool, error) {
	s := existing
	if s == nil {
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: req.Secret.Name, Namespace: req.Secret.Namespace},
			Type:       corev1.SecretTypeTLS,
		}
	}
	before := s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	for k, v := range req.Labels {
		s.Labels[k] = v
	}
	s.Labels[shared.PurposeLabel] = req.Purpose.PurposeLabelValue()
	s.Labels[shared.ManagedByLabel] = shared.OperatorName
	if req.Owner != nil && req.Owner.GetNamespace() == s.Namespace {
		if err := controllerutil.SetControllerReference(req.Owner, s, c.Scheme()); err != nil {
			return false, fmt.Errorf("owning secret %s: %w", req.Secret, err)
		}
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range m.Data() {
		s.Data[k] = v
	}
	if existing != nil && sameSecret(before, s) {
		return false, nil
	}
	var err error
	if existing == nil {
		err = c.Create(ctx, s)
	} else {
		err = c.Update(ctx, s)
	}
	if err != nil {
		return false, fmt.Errorf("writing secret %s: %w", req.Secret, err)
	}
	return true, nil
}

func sameSecret(a, b *corev1.Secret) bool {
	return apiequality.Semantic.DeepEqual(a.Data, b.Data) &&
		apiequality.Semantic.DeepEqual(a.Labels, b.Labels) &&
		apiequality.Semantic.DeepEqual(a.OwnerReferences, b.OwnerReferences)
}

// DeleteSecret deletes a Secret; a missing one is no error.
func DeleteSecret(ctx context.Context, c client.Client, key types.NamespacedName) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	if err := c.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting secret %s: %w", key, err)
	}
	return nil
}
