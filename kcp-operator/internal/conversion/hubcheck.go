package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/lifecycle-manager/api/config/crd"
	"github.com/lifecycle-manager/api/v1beta1"
)

// The API server validates a v1beta1 write against the v1beta1 schema, in
// which v1beta1.V1beta2SpecAnnotation is any string; the conversion then
// sets the v1beta2 fields it carries, and the result is stored without
// another validation. So the conversion to the hub checks those fields
// against the hub's own schema — its OpenAPI rules and its CEL rules, read
// from the CRD the API server serves, so that the check cannot drift from
// it — and refuses the write when they break one.

// hubSchema validates objects against the schema of a CRD's storage version.
type hubSchema struct {
	openAPI    apiservervalidation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator // nil when the schema has no CEL rules
}

// newRegistry registers, for every converted kind, a converter that
// converts as controller-runtime's hub and spoke would, and checks what
// the annotation carried into the hub.
func newRegistry() (crconversion.Registry, error) {
	crds, err := crd.All()
	if err != nil {
		return nil, err
	}
	reg := crconversion.NewRegistry()
	for _, c := range crds {
		if len(c.Spec.Versions) < 2 {
			continue
		}
		hs, err := newHubSchema(c)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: %w", c.Name, err)
		}
		gk := schema.GroupKind{Group: c.Spec.Group, Kind: c.Spec.Names.Kind}
		if err := reg.RegisterConverter(gk, checkedConverter{hub: hs}); err != nil {
			return nil, fmt.Errorf("registering the conversion of %s: %w", gk, err)
		}
	}
	return reg, nil
}

func newHubSchema(c *apiextensionsv1.CustomResourceDefinition) (*hubSchema, error) {
	for _, v := range c.Spec.Versions {
		if !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("reading the schema of %s: %w", v.Name, err)
		}
		openAPI, _, err := apiservervalidation.NewSchemaValidator(internal)
		if err != nil {
			return nil, fmt.Errorf("the OpenAPI schema of %s: %w", v.Name, err)
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, fmt.Errorf("the structural schema of %s: %w", v.Name, err)
		}
		return &hubSchema{openAPI: openAPI, structural: structural,
			cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
	}
	return nil, fmt.Errorf("no storage version with a schema")
}

// validate returns the errors of obj against the schema in the fields
// spec.<name> for the names given.
func (h *hubSchema) validate(ctx context.Context, obj map[string]any, names []string) field.ErrorList {
	errs := apiservervalidation.ValidateCustomResource(nil, obj, h.openAPI)
	if h.cel != nil {
		celErrs, _ := h.cel.Validate(ctx, nil, h.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	var mine field.ErrorList
	for _, e := range errs {
		for _, n := range names {
			if p := "spec." + n; e.Field == p || strings.HasPrefix(e.Field, p+".") || strings.HasPrefix(e.Field, p+"[") {
				mine = append(mine, e)
				break
			}
		}
	}
	return mine
}

// checkedConverter converts between a spoke and the hub, and refuses a
// conversion to the hub whose annotation carried fields the hub refuses.
type checkedConverter struct {
	hub *hubSchema
}

// ConvertObject implements crconversion.Converter.
func (c checkedConverter) ConvertObject(ctx context.Context, src, dst runtime.Object) error {
	if hub, ok := src.(conversion.Hub); ok {
		spoke, ok := dst.(conversion.Convertible)
		if !ok {
			return fmt.Errorf("converting %T to %T: no spoke", src, dst)
		}
		return spoke.ConvertFrom(hub)
	}
	spoke, ok := src.(conversion.Convertible)
	hub, isHub := dst.(conversion.Hub)
	if !ok || !isHub {
		return fmt.Errorf("converting %T to %T: want a spoke and the hub", src, dst)
	}
	carried := annotationFields(src)
	if err := spoke.ConvertTo(hub); err != nil {
		return err
	}
	if len(carried) == 0 || annotated(dst) {
		return nil // the annotation did not decode: it stays an annotation and sets nothing
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dst)
	if err != nil {
		return fmt.Errorf("checking the converted %T: %w", dst, err)
	}
	if errs := c.hub.validate(ctx, obj, carried); len(errs) > 0 {
		m, _ := meta.Accessor(src)
		return fmt.Errorf("%s/%s: annotation %s sets v1beta2 fields that v1beta2 refuses: %w",
			m.GetNamespace(), m.GetName(), v1beta1.V1beta2SpecAnnotation, errs.ToAggregate())
	}
	return nil
}

// annotationFields are the names of the spec fields that obj's
// V1beta2SpecAnnotation carries; none when it has none or it does not
// decode.
func annotationFields(obj runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	raw, ok := m.GetAnnotations()[v1beta1.V1beta2SpecAnnotation]
	if !ok {
		return nil
	}
	var f map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &f) != nil {
		return nil
	}
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	return names
}

func annotated(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	_, ok := m.GetAnnotations()[v1beta1.V1beta2SpecAnnotation]
	return ok
}
