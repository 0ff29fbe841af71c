package resolve

import (
	"context"
	"encoding/json"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/index"
)

// Index names of the cache field indexes this package needs.
const (
	// IndexTemplateModule indexes templates by spec.moduleName and the module-name label.
	IndexTemplateModule = "moduletemplate.moduleName"
	// IndexTemplateFQDN indexes templates by their descriptor's component name.
	IndexTemplateFQDN = "moduletemplate.fqdn"
	// IndexReleaseMetaModule indexes release metas by module and OCM component name.
	IndexReleaseMetaModule = "modulereleasemeta.moduleName"
	// IndexMandatory indexes mandatory templates and release metas under "true".
	IndexMandatory = "mandatory"
)

// Indexes registers the field indexes on the manager's cache.
func Indexes(ctx context.Context, fi client.FieldIndexer) error {
	return index.Add(ctx, fi,
		index.Field{Obj: &v1beta2.ModuleTemplate{}, Name: IndexTemplateModule, Fn: func(o client.Object) []string {
			return templateModuleNames(o.(*v1beta2.ModuleTemplate))
		}},
		index.Field{Obj: &v1beta2.ModuleTemplate{}, Name: IndexTemplateFQDN, Fn: func(o client.Object) []string {
			return nonEmpty(ComponentName(o.(*v1beta2.ModuleTemplate)))
		}},
		index.Field{Obj: &v1beta2.ModuleTemplate{}, Name: IndexMandatory, Fn: func(o client.Object) []string {
			return flag(o.(*v1beta2.ModuleTemplate).Spec.Mandatory)
		}},
		index.Field{Obj: &v1beta2.ModuleReleaseMeta{}, Name: IndexMandatory, Fn: func(o client.Object) []string {
			return flag(o.(*v1beta2.ModuleReleaseMeta).Spec.Mandatory != nil)
		}},
		index.Field{Obj: &v1beta2.ModuleReleaseMeta{}, Name: IndexReleaseMetaModule, Fn: func(o client.Object) []string {
			m := o.(*v1beta2.ModuleReleaseMeta)
			return nonEmpty(m.Spec.ModuleName, m.Spec.OcmComponentName)
		}},
	)
}

// ModuleName returns the module a template belongs to: spec.moduleName, else the module-name label.
func ModuleName(t *v1beta2.ModuleTemplate) string {
	if t.Spec.ModuleName != "" {
		return t.Spec.ModuleName
	}
	return t.Labels[shared.ModuleNameLabel]
}

func templateModuleNames(t *v1beta2.ModuleTemplate) []string {
	return nonEmpty(t.Spec.ModuleName, t.Labels[shared.ModuleNameLabel])
}

// ComponentName reads the OCM component name from a template's descriptor
// without parsing the rest; "" when there is none.
func ComponentName(t *v1beta2.ModuleTemplate) string {
	var probe struct {
		Component struct {
			Name string `json:"name"`
		} `json:"component"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if len(t.Spec.Descriptor.Raw) == 0 || json.Unmarshal(t.Spec.Descriptor.Raw, &probe) != nil {
		return ""
	}
	if probe.Component.Name != "" {
		return probe.Component.Name
	}
	return probe.Metadata.Name
}

func nonEmpty(values ...string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		if v != "" && (len(out) == 0 || out[len(out)-1] != v) {
			out = append(out, v)
		}
	}
	return out
}

func flag(on bool) []string {
	if on {
		return []string{"true"}
	}
	return nil
}
