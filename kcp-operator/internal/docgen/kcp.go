package docgen

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/testenv"
)

// StartKCP starts an API server with what the operator needs to be
// assembled: this API's CRDs and Istio's Gateway and VirtualService, whose
// REST mappings the Watcher controller checks. Call Stop when done.
func StartKCP() (*testenv.Env, error) {
	env, err := testenv.Start(testenv.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{
		istioCRD("Gateway"), istioCRD("VirtualService"),
	}})
	if err != nil {
		return nil, fmt.Errorf("starting an API server: %w", err)
	}
	return env, nil
}

// istioCRD is an Istio networking kind without its schema: only its
// mapping matters here.
func istioCRD(kind string) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".networking.istio.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "networking.istio.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}
