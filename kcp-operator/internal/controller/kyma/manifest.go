package kyma

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// Descriptor resource names of a module's layers.
const (
	LayerRawManifest = "raw-manifest"
	LayerHelmChart   = "helm-chart"
	LayerConfig      = "config"
)

// buildManifest returns the Manifest that installs module m for kyma.
func buildManifest(kyma *v1beta2.Kyma, m *resolve.Module, listed v1beta2.Module, scheme *runtime.Scheme) (*v1beta2.Manifest, error) {
	layerName, install, err := installSource(m.Descriptor)
	if err != nil {
		return nil, err
	}
	creds := pullSecretSelector(m.Template)
	install.CredSecretSelector = creds
	raw, err := json.Marshal(install)
	if err != nil {
		return nil, fmt.Errorf("encoding the install source: %w", err)
	}
	config, err := configSource(m.Descriptor)
	if err != nil {
		return nil, err
	}
	if config != nil {
		config.CredSecretSelector = creds
	}
	policy := listed.CustomResourcePolicy
	if policy == "" {
		policy = v1beta2.CustomResourcePolicyCreateAndDelete
	}
	mf := &v1beta2.Manifest{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.ManifestKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        ManifestName(kyma, m.ModuleName),
			Namespace:   kyma.Namespace,
			Labels:      manifestLabels(kyma, m),
			Annotations: map[string]string{shared.FQDNAnnotation: m.FQDN},
			// Set at creation, so that the Manifest controller does not
			// spend a write of its own on it: one of five per Manifest.
			Finalizers: []string{shared.ManifestFinalizer},
		},
		Spec: v1beta2.ManifestSpec{
			Remote:               true,
			Version:              m.Version,
			Install:              v1beta2.InstallInfo{Name: layerName, Source: runtime.RawExtension{Raw: raw}},
			Config:               config,
			CustomResourcePolicy: policy,
		},
	}
	if policy == v1beta2.CustomResourcePolicyCreateAndDelete && m.Template.Spec.Data != nil {
		// The namespace stays as the template has it: only the runtime
		// knows whether the CR's kind is namespaced, and the Manifest
		// controller defaults it there.
		mf.Spec.Resource = m.Template.Spec.Data.DeepCopy()
		// The checks read the default CR, so they go only with it.
		mf.Spec.CustomStateCheck = stateChecks(m.Template.Spec.CustomStateCheck)
	}
	if m.Template.Spec.Manager != nil {
		mf.Spec.Manager = m.Template.Spec.Manager.DeepCopy()
	}
	mf.Spec.AssociatedResources = slices.Clone(m.Template.Spec.AssociatedResources)
	if err := controllerutil.SetControllerReference(kyma, mf, scheme); err != nil {
		return nil, fmt.Errorf("setting the owner of Manifest %s: %w", mf.Name, err)
	}
	mf.Annotations[shared.SpecHashAnnotation] = hashJSON(struct {
		Labels map[string]string
		Spec   v1beta2.ManifestSpec
		Owners []metav1.OwnerReference
	}{mf.Labels, mf.Spec, mf.OwnerReferences})
	return mf, nil
}

// stateChecks copies a template's checks; a null entry checks nothing.
func stateChecks(checks []*v1beta2.CustomStateCheck) []v1beta2.CustomStateCheck {
	var out []v1beta2.CustomStateCheck
	for _, c := range checks {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

func manifestLabels(kyma *v1beta2.Kyma, m *resolve.Module) map[string]string {
	labels := map[string]string{
		shared.KymaNameLabel:   kyma.Name,
		shared.ModuleNameLabel: m.ModuleName,
		shared.ManagedByLabel:  shared.OperatorName,
	}
	if m.Channel != "" {
		labels[shared.ChannelLabel] = m.Channel
	}
	if m.Mandatory {
		labels[shared.MandatoryModuleLabel] = shared.EnabledValue
	}
	if id := kyma.RuntimeID(); id != "" {
		labels[shared.RuntimeIDLabel] = id
	}
	if s := kyma.Labels[shared.ShardLabel]; s != "" {
		labels[shared.ShardLabel] = s
	}
	return labels
}

// installSource picks the layer with the module's resources: raw manifests,
// else a Helm chart.
func installSource(d *descriptor.Descriptor) (string, v1beta2.ImageSpec, error) {
	for _, layer := range []struct {
		name string
		typ  v1beta2.RefType
	}{{LayerRawManifest, v1beta2.RefTypeRawManifest}, {LayerHelmChart, v1beta2.RefTypeHelmChart}} {
		if _, ok := d.Resource(layer.name); !ok {
			continue
		}
		spec, err := imageSpec(d, layer.name)
		if err != nil {
			return "", v1beta2.ImageSpec{}, err
		}
		spec.Type = layer.typ
		return layer.name, spec, nil
	}
	return "", v1beta2.ImageSpec{}, fmt.Errorf("descriptor of %s:%s has neither a %q nor a %q resource",
		d.Name, d.Version, LayerRawManifest, LayerHelmChart)
}

// configSource is the optional layer with the module's configuration values.
func configSource(d *descriptor.Descriptor) (*v1beta2.ImageSpec, error) {
	if _, ok := d.Resource(LayerConfig); !ok {
		return nil, nil
	}
	spec, err := imageSpec(d, LayerConfig)
	if err != nil {
		return nil, err
	}
	return &spec, nil
}

// imageSpec splits a layer reference the way the public lifecycle manager
// writes it: Repo + "/" + Name is the repository, Ref the digest or tag.
func imageSpec(d *descriptor.Descriptor, resource string) (v1beta2.ImageSpec, error) {
	layer, err := d.LayerOf(resource)
	if err != nil {
		return v1beta2.ImageSpec{}, err
	}
	repo, name := layer.Repository, ""
	if base, ok := strings.CutSuffix(layer.Repository, "/"+d.Name); ok {
		repo, name = base, d.Name
	} else if i := strings.LastIndex(layer.Repository, "/"); i > 0 {
		repo, name = layer.Repository[:i], layer.Repository[i+1:]
	}
	ref := layer.Digest
	if ref == "" {
		ref = layer.Tag
	}
	return v1beta2.ImageSpec{Repo: repo, Name: name, Ref: ref}, nil
}

// pullSecretSelector selects the registry pull Secrets a template names.
func pullSecretSelector(t *v1beta2.ModuleTemplate) *metav1.LabelSelector {
	value, ok := t.Labels[shared.OCIRegistryCredLabel]
	if !ok {
		return nil
	}
	return &metav1.LabelSelector{MatchLabels: map[string]string{shared.OCIRegistryCredLabel: value}}
}
