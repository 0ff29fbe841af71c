package index

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

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
