package v1beta1

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/lifecycle-manager/api/v1beta2"
)

// templateSpecFields are the JSON fields both versions have.
var templateSpecFields = []string{"channel", "data", "descriptor", "customStateCheck"}

// templateV1beta1Only is what V1beta1SpecAnnotation holds on a v1beta2 ModuleTemplate.
type templateV1beta1Only struct {
	Target Target `json:"target,omitempty"`
}

// ConvertTo converts t to the v1beta2 ModuleTemplate dst; spec.target goes
// into V1beta1SpecAnnotation.
func (t *ModuleTemplate) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*v1beta2.ModuleTemplate)
	if !ok {
		return fmt.Errorf("converting a v1beta1 ModuleTemplate to %T: want a v1beta2 ModuleTemplate", dst)
	}
	hub.ObjectMeta = *t.ObjectMeta.DeepCopy()
	hub.Spec = v1beta2.ModuleTemplateSpec{
		Channel:          t.Spec.Channel,
		Data:             t.Spec.Data.DeepCopy(),
		Descriptor:       *t.Spec.Descriptor.DeepCopy(),
		CustomStateCheck: copyStateChecks(t.Spec.CustomStateCheck),
	}
	takeFields(&hub.ObjectMeta, V1beta2SpecAnnotation, func(extra fields) error {
		spec := *hub.Spec.DeepCopy()
		if err := decodeInto(&spec, extra, templateSpecFields...); err != nil {
			return err
		}
		hub.Spec = spec
		return nil
	})
	return setJSON(&hub.ObjectMeta, V1beta1SpecAnnotation, templateV1beta1Only{Target: t.Spec.Target})
}

// ConvertFrom converts the v1beta2 ModuleTemplate src to t; the
// v1beta2-only fields go into V1beta2SpecAnnotation.
func (t *ModuleTemplate) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*v1beta2.ModuleTemplate)
	if !ok {
		return fmt.Errorf("converting %T to a v1beta1 ModuleTemplate: want a v1beta2 ModuleTemplate", src)
	}
	t.ObjectMeta = *hub.ObjectMeta.DeepCopy()
	t.Spec = ModuleTemplateSpec{
		Channel:          hub.Spec.Channel,
		Data:             hub.Spec.Data.DeepCopy(),
		Descriptor:       *hub.Spec.Descriptor.DeepCopy(),
		CustomStateCheck: copyStateChecks(hub.Spec.CustomStateCheck),
	}
	var only templateV1beta1Only
	if takeJSON(&t.ObjectMeta, V1beta1SpecAnnotation, &only) {
		t.Spec.Target = only.Target
	}
	extra, err := remainder(hub.Spec, templateSpecFields...)
	if err != nil {
		return err
	}
	return setJSON(&t.ObjectMeta, V1beta2SpecAnnotation, extra)
}

func copyStateChecks(in []*v1beta2.CustomStateCheck) []*v1beta2.CustomStateCheck {
	if in == nil {
		return nil
	}
	out := make([]*v1beta2.CustomStateCheck, len(in))
	for i, c := range in {
		out[i] = c.DeepCopy()
	}
	return out
}
