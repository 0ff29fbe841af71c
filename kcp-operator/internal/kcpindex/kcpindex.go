package kcpindex

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// ByKymaName indexes Secrets and Manifests by their kyma-name label.
const ByKymaName = "kcpindex.byKymaName"

// Register adds the index to the manager's cache.
func Register(ctx context.Context, fi client.FieldIndexer) error {
	for _, obj := range []client.Object{&corev1.Secret{}, &v1beta2.Manifest{}} {
		if err := fi.IndexField(ctx, obj, ByKymaName, kymaName); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", obj, ByKymaName, err)
		}
	}
	return nil
}

func kymaName(o client.Object) []string {
	if name := o.GetLabels()[shared.KymaNameLabel]; name != "" {
		return []string{name}
	}
	return nil
}

// OfKyma selects the objects of kyma (with InNamespace) in an indexed cache.
func OfKyma(kyma *v1beta2.Kyma) []client.ListOption {
	return []client.ListOption{client.InNamespace(kyma.Namespace), client.MatchingFields{ByKymaName: kyma.Name}}
}
