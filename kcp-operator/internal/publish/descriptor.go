package publish

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/kcp-operator/internal/descriptor"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// v2Descriptor is an OCM component descriptor of schema v2 as modulectl
// writes it: the fields OCM's schema requires (sources and
// componentReferences too, even when empty) and nothing else, so that the
// same module always gives the same descriptor.
type v2Descriptor struct {
	Meta       v2Meta                `json:"meta"`
	Component  v2Component           `json:"component"`
	Signatures []signature.Signature `json:"signatures,omitempty"`
}

type v2Meta struct {
	SchemaVersion string `json:"schemaVersion"`
}

type v2Component struct {
	Name                string                         `json:"name"`
	Version             string                         `json:"version"`
	Provider            string                         `json:"provider"`
	Labels              []descriptor.Label             `json:"labels,omitempty"`
	RepositoryContexts  []descriptor.RepositoryContext `json:"repositoryContexts"`
	Resources           []descriptor.Resource          `json:"resources"`
	Sources             []json.RawMessage              `json:"sources"`
	ComponentReferences []json.RawMessage              `json:"componentReferences"`
}

// buildDescriptor writes the descriptor of a module whose layers are local
// blobs of the component version in the registry at baseURL, and checks
// it the way the operator reads it: it parses, and every layer resolves to
// <baseURL>/component-descriptors/<component>@<digest>. With a signer, the
// digest of the default CR is recorded in a label and the descriptor is
// signed (see internal/signature). It returns the document as YAML (what
// is pushed) and as JSON (what the ModuleTemplate embeds).
func buildDescriptor(component, version, provider, baseURL string, layers []Layer, sign *signing) (yamlDoc, jsonDoc []byte, err error) {
	d := v2Descriptor{
		Meta: v2Meta{SchemaVersion: descriptor.SchemaV2},
		Component: v2Component{
			Name: component, Version: version, Provider: provider,
			RepositoryContexts: []descriptor.RepositoryContext{{
				Type: descriptor.RepositoryTypeOCI, BaseURL: baseURL, ComponentNameMapping: "urlPath",
			}},
			Sources:             []json.RawMessage{},
			ComponentReferences: []json.RawMessage{},
		},
	}
	for _, l := range layers {
		d.Component.Resources = append(d.Component.Resources, descriptor.Resource{
			Name: l.Name, Version: version, Type: l.Type, Relation: "local",
			Access: descriptor.Access{Type: descriptor.AccessLocalBlob, LocalReference: l.Digest(), MediaType: l.MediaType},
		})
	}
	if sign != nil && sign.defaultCR != "" {
		value, err := json.Marshal(sign.defaultCR)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding the default CR's digest: %w", err)
		}
		d.Component.Labels = []descriptor.Label{{Name: signature.DefaultCRLabel, Value: value}}
	}
	if jsonDoc, err = json.Marshal(d); err != nil {
		return nil, nil, fmt.Errorf("encoding the component descriptor: %w", err)
	}
	if err := checkDescriptor(jsonDoc, layers); err != nil {
		return nil, nil, err
	}
	if sign != nil {
		if jsonDoc, err = sign.sign(&d, jsonDoc); err != nil {
			return nil, nil, err
		}
	}
	if yamlDoc, err = yaml.JSONToYAML(jsonDoc); err != nil {
		return nil, nil, fmt.Errorf("encoding the component descriptor: %w", err)
	}
	return yamlDoc, jsonDoc, nil
}

func checkDescriptor(doc []byte, layers []Layer) error {
	d, err := descriptor.Parse(doc)
	if err != nil {
		return invalid("the component descriptor would be invalid: %w", err)
	}
	repo, err := d.OCIRepository()
	if err != nil {
		return invalid("the component descriptor would be invalid: %w", err)
	}
	for _, l := range layers {
		got, err := d.LayerOf(l.Name)
		if err != nil {
			return invalid("the component descriptor would be invalid: %w", err)
		}
		if got.Repository != repo || got.Digest != l.Digest() {
			return fmt.Errorf("layer %s resolves to %s, want %s@%s", l.Name, got.Ref(), repo, l.Digest())
		}
	}
	return nil
}

// sameDescriptor compares two descriptor documents (YAML or JSON) by content.
func sameDescriptor(a, b []byte) (bool, error) {
	ca, err := canonicalJSON(a)
	if err != nil {
		return false, err
	}
	cb, err := canonicalJSON(b)
	if err != nil {
		return false, err
	}
	return string(ca) == string(cb), nil
}

func canonicalJSON(doc []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v) // maps are written with sorted keys
}
