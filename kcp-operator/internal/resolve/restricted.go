package resolve

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/v1beta2"
)

// Selects reports whether the release meta offers its module to kyma: a
// meta without spec.kymaSelector offers it to every Kyma; one with a
// selector (a restricted module) only to the Kymas whose labels it selects.
// A selector that selects by nothing offers it to none, as the public
// operator treats it; one that does not parse is an error.
func Selects(meta *v1beta2.ModuleReleaseMeta, kyma *v1beta2.Kyma) (bool, error) {
	sel := meta.Spec.KymaSelector
	if sel == nil {
		return true, nil
	}
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return false, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, fmt.Errorf("spec.kymaSelector of ModuleReleaseMeta %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	return s.Matches(labels.Set(kyma.Labels)), nil
}

// restricted returns why the module of meta is not available to kyma, or
// nil when it is.
func restricted(name string, kyma *v1beta2.Kyma, meta *v1beta2.ModuleReleaseMeta) error {
	ok, err := Selects(meta, kyma)
	switch {
	case err != nil:
		return fail(name, "it is restricted and its selector is invalid: %v", err)
	case !ok:
		return fail(name, "module %s is restricted and not available for this Kyma (spec.kymaSelector of ModuleReleaseMeta %s does not select it)",
			meta.Spec.ModuleName, meta.Name)
	}
	return nil
}

// restrictedTemplate applies the restriction to a template found without
// its release meta (by its name or component): the module's release meta,
// if one exists, restricts it all the same.
func (r *Resolver) restrictedTemplate(ctx context.Context, name string, kyma *v1beta2.Kyma, t *v1beta2.ModuleTemplate) error {
	module := ModuleName(t)
	if module == "" {
		return nil
	}
	var metas v1beta2.ModuleReleaseMetaList
	if err := r.reader.List(ctx, &metas, client.InNamespace(kyma.Namespace),
		client.MatchingFields{IndexReleaseMetaModule: module}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing ModuleReleaseMetas of %q: %w", module, err)
	}
	for i := range metas.Items {
		if err := restricted(name, kyma, &metas.Items[i]); err != nil {
			return err
		}
	}
	return nil
}
