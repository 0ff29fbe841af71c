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
	return Add(ctx, fi,
		Field{&corev1.Secret{}, ByKymaName, kymaName},
		Field{&v1beta2.Manifest{}, ByKymaName, kymaName},
		Field{&v1beta2.Kyma{}, KymaRuntimeID, func(o client.Object) []string { return []string{RuntimeID(o.(*v1beta2.Kyma))} }},
		Field{&v1beta2.Manifest{}, ManifestObjects, manifestKeys},
	)
}

// Field is one field index: objects of Obj's type by Name, the values Fn gives.
type Field struct {
	Obj  client.Object
	Name string
	Fn   client.IndexerFunc
}

// Add adds fields to the cache; packages with indexes of their own
// register them with it.
func Add(ctx context.Context, fi client.FieldIndexer, fields ...Field) error {
	for _, f := range fields {
		if err := fi.IndexField(ctx, f.Obj, f.Name, f.Fn); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", f.Obj, f.Name, err)
		}
	}
	return nil
}
