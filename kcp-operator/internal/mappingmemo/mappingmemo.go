package mappingmemo

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Mapper answers RESTMapping for a kind at one explicit version from
// memory once the wrapped mapper has answered it; all other lookups, and
// failures, pass through.
type Mapper struct {
	meta.RESTMapper

	mu       sync.RWMutex
	mappings map[schema.GroupVersionKind]meta.RESTMapping
}

// New wraps m.
func New(m meta.RESTMapper) *Mapper {
	return &Mapper{RESTMapper: m, mappings: map[schema.GroupVersionKind]meta.RESTMapping{}}
}

// RESTMapping returns the mapping of gk at versions.
func (m *Mapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	m.mu.RLock()
	known, ok := m.mappings[gvk]
	m.mu.RUnlock()
	if ok {
		return &known, nil
	}
	found, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.mappings[gvk] = *found
	m.mu.Unlock()
	return found, nil
}
