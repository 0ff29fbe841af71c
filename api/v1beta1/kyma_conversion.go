package v1beta1

import (
	"encoding/json"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
)

// The JSON fields both versions have.
var (
	kymaSpecFields   = []string{"channel", "modules"}
	kymaModuleFields = []string{"name", "controller", "channel", "customResourcePolicy"}
)

// kymaV1beta1Only is what V1beta1SpecAnnotation holds on a v1beta2 Kyma.
type kymaV1beta1Only struct {
	Sync *Sync `json:"sync,omitempty"`
}

// ConvertTo converts k to the v1beta2 Kyma dst. spec.sync goes into
// V1beta1SpecAnnotation, and spec.sync.namespace also into the
// sync-namespace annotation, which is where v1beta2 reads the runtime-side
// namespace from.
func (k *Kyma) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*v1beta2.Kyma)
	if !ok {
		return fmt.Errorf("converting a v1beta1 Kyma to %T: want a v1beta2 Kyma", dst)
	}
	hub.ObjectMeta = *k.ObjectMeta.DeepCopy()
	hub.Status = *k.Status.DeepCopy()
	hub.Spec = v1beta2.KymaSpec{Channel: k.Spec.Channel}
	for _, m := range k.Spec.Modules {
		hub.Spec.Modules = append(hub.Spec.Modules, v1beta2.Module{
			Name: m.Name, ControllerName: m.ControllerName, Channel: m.Channel, CustomResourcePolicy: m.CustomResourcePolicy,
		})
	}
	takeFields(&hub.ObjectMeta, V1beta2SpecAnnotation, func(extra fields) error {
		spec, err := kymaSpecWith(hub.Spec, extra)
		hub.Spec = spec
		return err
	})
	if k.Spec.Sync == nil {
		return nil
	}
	sync := k.Spec.Sync.DeepCopy()
	if sync.Namespace != "" {
		setAnnotation(&hub.ObjectMeta, shared.SyncNamespaceAnnotation, sync.Namespace)
	}
	return setJSON(&hub.ObjectMeta, V1beta1SpecAnnotation, kymaV1beta1Only{Sync: sync})
}

// kymaSpecWith returns spec with the v1beta2-only fields of extra (the
// JSON of a partial v1beta2 spec, modules matched by name), or spec
// unchanged and an error.
func kymaSpecWith(spec v1beta2.KymaSpec, extra fields) (v1beta2.KymaSpec, error) {
	out := *spec.DeepCopy()
	var modules []fields
	if raw, ok := extra["modules"]; ok {
		if err := strictDecode(raw, &modules); err != nil {
			return spec, err
		}
	}
	for _, m := range modules {
		var name string
		if err := json.Unmarshal(m["name"], &name); err != nil {
			return spec, fmt.Errorf("a module without a name: %w", err)
		}
		// A module the v1beta1 spec no longer lists takes its fields along.
		if i := slices.IndexFunc(out.Modules, func(x v1beta2.Module) bool { return x.Name == name }); i >= 0 {
			if err := decodeInto(&out.Modules[i], m, kymaModuleFields...); err != nil {
				return spec, err
			}
		}
	}
	if err := decodeInto(&out, extra, kymaSpecFields...); err != nil {
		return spec, err
	}
	return out, nil
}

// ConvertFrom converts the v1beta2 Kyma src to k; the v1beta2-only fields
// go into V1beta2SpecAnnotation.
func (k *Kyma) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*v1beta2.Kyma)
	if !ok {
		return fmt.Errorf("converting %T to a v1beta1 Kyma: want a v1beta2 Kyma", src)
	}
	k.ObjectMeta = *hub.ObjectMeta.DeepCopy()
	k.Status = *hub.Status.DeepCopy()
	k.Spec = KymaSpec{Channel: hub.Spec.Channel}
	for _, m := range hub.Spec.Modules {
		k.Spec.Modules = append(k.Spec.Modules, Module{
			Name: m.Name, ControllerName: m.ControllerName, Channel: m.Channel, CustomResourcePolicy: m.CustomResourcePolicy,
		})
	}
	var only kymaV1beta1Only
	if takeJSON(&k.ObjectMeta, V1beta1SpecAnnotation, &only) && only.Sync != nil {
		// The sync-namespace annotation is the same setting and may have
		// changed since: v1beta2 clients write it.
		if only.Sync.Namespace != "" {
			only.Sync.Namespace = k.Annotations[shared.SyncNamespaceAnnotation]
			dropAnnotation(&k.ObjectMeta, shared.SyncNamespaceAnnotation)
		}
		k.Spec.Sync = only.Sync
	}
	extra, err := kymaExtra(hub.Spec)
	if err != nil {
		return err
	}
	return setJSON(&k.ObjectMeta, V1beta2SpecAnnotation, extra)
}

// kymaExtra is the partial v1beta2 spec of the fields v1beta1 has none for.
func kymaExtra(spec v1beta2.KymaSpec) (fields, error) {
	top, err := remainder(spec, kymaSpecFields...)
	if err != nil {
		return nil, err
	}
	var modules []fields
	for _, m := range spec.Modules {
		rest, err := remainder(m, kymaModuleFields...)
		if err != nil {
			return nil, err
		}
		// managed: true is the default, which the API server sets again;
		// carrying it would put the annotation on every v1beta1 Kyma.
		if m.IsManaged() {
			delete(rest, "managed")
		}
		if len(rest) == 0 {
			continue
		}
		if rest["name"], err = json.Marshal(m.Name); err != nil {
			return nil, fmt.Errorf("encoding module name: %w", err)
		}
		modules = append(modules, rest)
	}
	if len(modules) > 0 {
		if top["modules"], err = json.Marshal(modules); err != nil {
			return nil, fmt.Errorf("encoding modules: %w", err)
		}
	}
	return top, nil
}
