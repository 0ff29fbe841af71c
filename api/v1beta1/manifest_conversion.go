package v1beta1

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/lifecycle-manager/api/v1beta2"
)

// manifestSpecFields are the JSON fields both versions have; v1beta1 has
// none of its own.
var manifestSpecFields = []string{"remote", "version", "config", "install", "resource", "customResourcePolicy"}

// ConvertTo converts m to the v1beta2 Manifest dst.
func (m *Manifest) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*v1beta2.Manifest)
	if !ok {
		return fmt.Errorf("converting a v1beta1 Manifest to %T: want a v1beta2 Manifest", dst)
	}
	hub.ObjectMeta = *m.ObjectMeta.DeepCopy()
	hub.Status = *m.Status.DeepCopy()
	hub.Spec = v1beta2.ManifestSpec{
		Remote:               m.Spec.Remote,
		Version:              m.Spec.Version,
		Config:               m.Spec.Config.DeepCopy(),
		Install:              *m.Spec.Install.DeepCopy(),
		Resource:             m.Spec.Resource.DeepCopy(),
		CustomResourcePolicy: m.Spec.CustomResourcePolicy,
	}
	takeFields(&hub.ObjectMeta, V1beta2SpecAnnotation, func(extra fields) error {
		spec := *hub.Spec.DeepCopy()
		if err := decodeInto(&spec, extra, manifestSpecFields...); err != nil {
			return err
		}
		hub.Spec = spec
		return nil
	})
	return nil
}

// ConvertFrom converts the v1beta2 Manifest src to m; the v1beta2-only
// fields go into V1beta2SpecAnnotation.
func (m *Manifest) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*v1beta2.Manifest)
	if !ok {
		return fmt.Errorf("converting %T to a v1beta1 Manifest: want a v1beta2 Manifest", src)
	}
	m.ObjectMeta = *hub.ObjectMeta.DeepCopy()
	m.Status = *hub.Status.DeepCopy()
	m.Spec = ManifestSpec{
		Remote:               hub.Spec.Remote,
		Version:              hub.Spec.Version,
		Config:               hub.Spec.Config.DeepCopy(),
		Install:              *hub.Spec.Install.DeepCopy(),
		Resource:             hub.Spec.Resource.DeepCopy(),
		CustomResourcePolicy: hub.Spec.CustomResourcePolicy,
	}
	extra, err := remainder(hub.Spec, manifestSpecFields...)
	if err != nil {
		return err
	}
	return setJSON(&m.ObjectMeta, V1beta2SpecAnnotation, extra)
}
