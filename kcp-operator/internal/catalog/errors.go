package catalog

import "k8s.io/apimachinery/pkg/api/meta"

// ignoreNoKind treats a runtime without our CRDs as one without a catalog.
func ignoreNoKind(err error) error {
	if meta.IsNoMatchError(err) {
		return nil
	}
	return err
}
