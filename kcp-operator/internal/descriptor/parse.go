package descriptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// MaxSize bounds the descriptors Parse accepts; real ones are a few KiB.
const MaxSize = 1 << 20

// componentName is the OCM component name syntax: a DNS domain, then a path.
var componentName = regexp.MustCompile(`^[a-z][-a-z0-9]*([.][a-z][-a-z0-9]*)*[.][a-z]{2,}(/[a-z0-9][-a-z0-9_]*([.][a-z0-9][-a-z0-9_]*)*)+$`)

type v2Document struct {
	Meta struct {
		SchemaVersion string `json:"schemaVersion"`
	} `json:"meta"`
	Component struct {
		Name               string              `json:"name"`
		Version            string              `json:"version"`
		Provider           json.RawMessage     `json:"provider"`
		Labels             []Label             `json:"labels"`
		RepositoryContexts []RepositoryContext `json:"repositoryContexts"`
		Resources          []Resource          `json:"resources"`
	} `json:"component"`
}

type v3Document struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name     string          `json:"name"`
		Version  string          `json:"version"`
		Provider json.RawMessage `json:"provider"`
		Labels   []Label         `json:"labels"`
	} `json:"metadata"`
	RepositoryContexts []RepositoryContext `json:"repositoryContexts"`
	Spec               struct {
		Resources []Resource `json:"resources"`
	} `json:"spec"`
}

// Absent reports whether a template's spec.descriptor holds no descriptor
// at all — empty, null or {}, as the public modulectl writes templates whose
// descriptor is in the registry — rather than a bad one.
func Absent(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return false // YAML or junk: Parse says what is wrong
	}
	return len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// Parse reads a descriptor from JSON or YAML.
func Parse(raw []byte) (*Descriptor, error) {
	if len(raw) == 0 {
		return nil, errors.New("descriptor is empty")
	}
	if len(raw) > MaxSize {
		return nil, fmt.Errorf("descriptor is %d bytes, more than the limit of %d", len(raw), MaxSize)
	}
	data, err := asJSON(raw)
	if err != nil {
		return nil, err
	}
	var probe struct {
		APIVersion string          `json:"apiVersion"`
		Meta       json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("descriptor is not an object: %w", err)
	}
	var d *Descriptor
	switch {
	case probe.APIVersion != "":
		d, err = parseV3(data, probe.APIVersion)
	case probe.Meta != nil:
		d, err = parseV2(data)
	default:
		return nil, errors.New("descriptor has neither meta.schemaVersion (v2) nor apiVersion (v3alpha1)")
	}
	if err != nil {
		return nil, err
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// asJSON converts a YAML descriptor to JSON. A JSON object, the form in
// which templates come from the API server, is used as it is: converting it
// as YAML cost about 95% of resolving a module.
func asJSON(raw []byte) ([]byte, error) {
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed, nil
	}
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("descriptor is neither JSON nor YAML: %w", err)
	}
	return data, nil
}

func parseV2(data []byte) (*Descriptor, error) {
	var doc v2Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding v2 descriptor: %w", err)
	}
	if doc.Meta.SchemaVersion != SchemaV2 {
		return nil, fmt.Errorf("meta.schemaVersion %q is not supported (want %q)", doc.Meta.SchemaVersion, SchemaV2)
	}
	c := doc.Component
	provider, err := providerName(c.Provider)
	if err != nil {
		return nil, fmt.Errorf("component.provider: %w", err)
	}
	return &Descriptor{
		SchemaVersion: SchemaV2, Name: c.Name, Version: c.Version, Provider: provider,
		Labels: c.Labels, RepositoryContexts: c.RepositoryContexts, Resources: c.Resources,
	}, nil
}

func parseV3(data []byte, apiVersion string) (*Descriptor, error) {
	if apiVersion != SchemaV3Alpha1 {
		return nil, fmt.Errorf("apiVersion %q is not supported (want %q)", apiVersion, SchemaV3Alpha1)
	}
	var doc v3Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding v3alpha1 descriptor: %w", err)
	}
	if doc.Kind != "ComponentVersion" {
		return nil, fmt.Errorf("kind %q is not supported (want ComponentVersion)", doc.Kind)
	}
	m := doc.Metadata
	provider, err := providerName(m.Provider)
	if err != nil {
		return nil, fmt.Errorf("metadata.provider: %w", err)
	}
	return &Descriptor{
		SchemaVersion: SchemaV3Alpha1, Name: m.Name, Version: m.Version, Provider: provider,
		Labels: m.Labels, RepositoryContexts: doc.RepositoryContexts, Resources: doc.Spec.Resources,
	}, nil
}

// providerName accepts the v2 string form (which Kyma fills with a JSON
// object in a string) and the v3 object form.
func providerName(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if !strings.HasPrefix(strings.TrimSpace(s), "{") {
			return s, nil
		}
		raw = json.RawMessage(s)
	}
	var obj struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("want a name or an object with a name: %w", err)
	}
	return obj.Name, nil
}

func (d *Descriptor) validate() error {
	switch {
	case d.Name == "":
		return errors.New("component name is missing")
	case !componentName.MatchString(d.Name):
		return fmt.Errorf("component name %q is not a valid OCM component name (domain/path)", d.Name)
	case d.Version == "":
		return fmt.Errorf("component %s has no version", d.Name)
	}
	seen := make(map[string]int, len(d.Resources))
	for i, r := range d.Resources {
		field := fmt.Sprintf("resources[%d]", i)
		if r.Name == "" {
			return fmt.Errorf("%s.name is missing", field)
		}
		if j, dup := seen[r.Name]; dup {
			return fmt.Errorf("%s: resource name %q is used by resources[%d] too", field, r.Name, j)
		}
		seen[r.Name] = i
		if r.Type == "" {
			return fmt.Errorf("%s (%s): type is missing", field, r.Name)
		}
		if err := r.Access.validate(); err != nil {
			return fmt.Errorf("%s (%s).access: %w", field, r.Name, err)
		}
	}
	return nil
}

func (a Access) validate() error {
	switch a.Kind() {
	case "":
		return errors.New("type is missing")
	case AccessLocalBlob:
		if a.LocalReference == "" {
			return errors.New("localReference is missing")
		}
	case AccessOCIArtifact:
		if a.ImageReference == "" {
			return errors.New("imageReference is missing")
		}
	case AccessOCIBlob:
		if a.Ref == "" || a.Digest == "" {
			return errors.New("ociBlob needs ref and digest")
		}
	}
	if a.GlobalAccess != nil {
		if err := a.GlobalAccess.validate(); err != nil {
			return fmt.Errorf("globalAccess: %w", err)
		}
	}
	return nil
}
