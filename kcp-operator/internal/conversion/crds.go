package conversion

import (
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/lifecycle-manager/api/config/crd"
)

// ReviewVersions are the ConversionReview versions the handler speaks.
var ReviewVersions = []string{"v1"}

// Configure makes every CRD of crds with more than one version serve all
// of them and convert through t; it returns their names. CRDs with one
// version stay as they are.
func Configure(crds []*apiextensionsv1.CustomResourceDefinition, t Target) []string {
	var names []string
	for _, c := range crds {
		if len(c.Spec.Versions) < 2 {
			continue
		}
		for i := range c.Spec.Versions {
			c.Spec.Versions[i].Served = true
		}
		c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             t.ClientConfig(),
				ConversionReviewVersions: slices.Clone(ReviewVersions),
			},
		}
		names = append(names, c.Name)
	}
	return names
}

// ConvertedCRDs are the names of the API's CRDs with more than one version:
// those whose caBundle the Keeper keeps.
func ConvertedCRDs() ([]string, error) {
	all, err := crd.All()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range all {
		if len(c.Spec.Versions) > 1 {
			names = append(names, c.Name)
		}
	}
	return names, nil
}
