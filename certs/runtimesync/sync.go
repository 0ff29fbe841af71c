package runtimesync

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/certs/metrics"
	"github.com/lifecycle-manager/certs/tlssecret"
)

const (
	// FieldOwner is the server-side apply field manager of the runtime Secret.
	FieldOwner = "lifecycle-manager-certs"
	// HashAnnotation holds tlssecret.Material.Hash of the applied content.
	HashAnnotation = shared.OperatorGroup + "/tls-content-hash"
)

// Syncer applies TLS material to one Secret name in every runtime.
type Syncer struct {
	key     types.NamespacedName
	metrics *metrics.Metrics
}

// New returns a Syncer for the runtime Secret namespace/name.
func New(namespace, name string, m *metrics.Metrics) *Syncer {
	return &Syncer{key: types.NamespacedName{Namespace: namespace, Name: name}, metrics: m}
}

// Key is the runtime Secret.
func (s *Syncer) Key() types.NamespacedName { return s.key }

// Apply makes the runtime's Secret hold m, and reports whether it wrote. It
// reads the Secret first and writes nothing when both its hash annotation
// and its data match m. Invalid material is refused before anything is sent.
func (s *Syncer) Apply(ctx context.Context, runtime client.Client, m tlssecret.Material) (bool, error) {
	wrote, err := s.apply(ctx, runtime, m)
	if err != nil {
		s.metrics.Failed(metrics.OperationSync)
		return false, err
	}
	s.metrics.Synced(wrote)
	return wrote, nil
}

func (s *Syncer) apply(ctx context.Context, runtime client.Client, m tlssecret.Material) (bool, error) {
	if err := m.Validate(); err != nil {
		return false, fmt.Errorf("refusing to sync invalid TLS material to %s: %w", s.key, err)
	}
	hash := m.Hash()
	var current corev1.Secret
	err := runtime.Get(ctx, s.key, &current)
	switch {
	case err == nil:
		if current.Annotations[HashAnnotation] == hash && upToDate(&current, hash) {
			return false, nil
		}
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("reading runtime secret %s: %w", s.key, err)
	}
	ac := corev1ac.Secret(s.key.Name, s.key.Namespace).
		WithLabels(map[string]string{shared.ManagedByLabel: shared.OperatorName}).
		WithAnnotations(map[string]string{HashAnnotation: hash}).
		WithData(m.Data())
	if err := runtime.Apply(ctx, ac, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying runtime secret %s: %w", s.key, err)
	}
	return true, nil
}

// upToDate checks the data as well as the annotation: someone may have
// edited the data and left the annotation.
func upToDate(s *corev1.Secret, hash string) bool {
	m := tlssecret.Material{CABundle: s.Data[tlssecret.CAKey], Cert: s.Data[tlssecret.CertKey], Key: s.Data[tlssecret.KeyKey]}
	return m.Hash() == hash
}

// Delete removes the runtime's Secret; a missing one is no error.
func (s *Syncer) Delete(ctx context.Context, runtime client.Client) error {
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = s.key.Name, s.key.Namespace
	if err := runtime.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting runtime secret %s: %w", s.key, err)
	}
	return nil
}
