package descriptor

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Schema versions this package reads.
const (
	SchemaV2       = "v2"
	SchemaV3Alpha1 = "ocm.software/v3alpha1"
)

// Access types, with the versioned spellings OCM also accepts.
const (
	AccessLocalBlob   = "localBlob"
	AccessOCIArtifact = "ociArtifact"
	AccessOCIBlob     = "ociBlob"
)

// RepositoryTypeOCI is the repository context type of OCI registries.
const RepositoryTypeOCI = "OCIRegistry"

// Descriptor is one component version.
type Descriptor struct {
	SchemaVersion      string
	Name               string
	Version            string
	Provider           string
	Labels             []Label
	RepositoryContexts []RepositoryContext
	Resources          []Resource
}

// Label is an OCM label; its value is any JSON.
type Label struct {
	Name    string          `json:"name"`
	Value   json.RawMessage `json:"value,omitempty"`
	Version string          `json:"version,omitempty"`
}

// RepositoryContext is where the component version is stored.
type RepositoryContext struct {
	Type                 string `json:"type"`
	BaseURL              string `json:"baseUrl"`
	SubPath              string `json:"subPath,omitempty"`
	ComponentNameMapping string `json:"componentNameMapping,omitempty"`
}

// Resource is one artifact of the component.
type Resource struct {
	Name     string  `json:"name"`
	Version  string  `json:"version,omitempty"`
	Type     string  `json:"type"`
	Relation string  `json:"relation,omitempty"`
	Labels   []Label `json:"labels,omitempty"`
	Access   Access  `json:"access"`
}

// Access says how to fetch a resource. Which fields are set depends on Type.
type Access struct {
	Type string `json:"type"`

	// localBlob
	LocalReference string  `json:"localReference,omitempty"`
	MediaType      string  `json:"mediaType,omitempty"`
	ReferenceName  string  `json:"referenceName,omitempty"`
	GlobalAccess   *Access `json:"globalAccess,omitempty"`

	// ociArtifact
	ImageReference string `json:"imageReference,omitempty"`

	// ociBlob
	Ref    string `json:"ref,omitempty"`
	Digest string `json:"digest,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

// Kind returns the access type without its version suffix ("localBlob/v1" is "localBlob").
func (a Access) Kind() string {
	kind, _, _ := strings.Cut(a.Type, "/")
	if kind == "ociRegistry" { // the older name of ociArtifact
		return AccessOCIArtifact
	}
	return kind
}

// Resource returns the resource with the given name.
func (d *Descriptor) Resource(name string) (Resource, bool) {
	for _, r := range d.Resources {
		if r.Name == name {
			return r, true
		}
	}
	return Resource{}, false
}

// Label returns the value of the label with the given name.
func (d *Descriptor) Label(name string) (json.RawMessage, bool) {
	for _, l := range d.Labels {
		if l.Name == name {
			return l.Value, true
		}
	}
	return nil, false
}

// OCIRepository returns the repository that holds the component version
// (and its local blobs), from the last OCI repository context: the current
// one by OCM convention.
func (d *Descriptor) OCIRepository() (string, error) {
	for i := len(d.RepositoryContexts) - 1; i >= 0; i-- {
		rc := d.RepositoryContexts[i]
		if !strings.EqualFold(rc.Type, RepositoryTypeOCI) && !strings.EqualFold(rc.Type, RepositoryTypeOCI+"/v1") {
			continue
		}
		base := strings.TrimSuffix(rc.BaseURL, "/")
		if rc.SubPath != "" {
			base += "/" + strings.Trim(rc.SubPath, "/")
		}
		switch rc.ComponentNameMapping {
		case "", "urlPath":
			return base + "/component-descriptors/" + d.Name, nil
		default:
			return "", fmt.Errorf("repository context %d: component name mapping %q is not supported (want urlPath)",
				i, rc.ComponentNameMapping)
		}
	}
	return "", fmt.Errorf("component %s has no OCI repository context", d.Name)
}
