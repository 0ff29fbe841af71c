package index

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Index names.
const (
	// ByKymaName indexes Secrets and Manifests by their kyma-name label.
	ByKymaName = "kyma.name"
	// KymaRuntimeID indexes Kymas by runtime ID: the runtime-id label, else
	// the Kyma's name (the CN the PKI gives a runtime without the label).
	KymaRuntimeID = "kyma.runtimeID"
	// ManifestObjects indexes Manifests by the runtime objects they placed.
	ManifestObjects = "manifest.objects"
)

// Register adds the indexes to the manager's cache.
func Register(ctx context.Context, fi client.FieldIndexer) error {
	indexes := []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&corev1.Secret{}, ByKymaName, kymaName},
		{&v1beta2.Manifest{}, ByKymaName, kymaName},
		{&v1beta2.Kyma{}, KymaRuntimeID, func(o client.Object) []string { return []string{RuntimeID(o.(*v1beta2.Kyma))} }},
		{&v1beta2.Manifest{}, ManifestObjects, manifestKeys},
	}
	for _, ix := range indexes {
		if err := fi.IndexField(ctx, ix.obj, ix.field, ix.fn); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", ix.obj, ix.field, err)
		}
	}
	return nil
}
