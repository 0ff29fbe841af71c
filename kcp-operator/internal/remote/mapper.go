package remote

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MemoMapper answers RESTMapping for a kind at one explicit version from
// memory once the wrapped mapper has answered it; all other lookups, and
// failures, pass through. Every client request and every cache lookup asks
// its mapper for one; controller-runtime's mapper answers by walking all
// the API groups it knows, which at 10,000 runtimes was 4% of the
// operator's CPU. A mapping of a kind at a given version does not change
// while the kind is served (a CRD's scope is immutable), and a kind that
// stops being served fails its requests as before, with NotFound instead
// of NoMatch, just as with the wrapped mapper, which keeps what it
// discovered too. The runtime connections use it, and so does the
// operator's KCP client.
type MemoMapper struct {
	meta.RESTMapper

	mu       sync.RWMutex
	mappings map[schema.GroupVersionKind]meta.RESTMapping
}

// NewMemoMapper wraps m.
func NewMemoMapper(m meta.RESTMapper) *MemoMapper {
	return &MemoMapper{RESTMapper: m, mappings: map[schema.GroupVersionKind]meta.RESTMapping{}}
}

// RESTMapping returns the mapping of gk at versions.
func (m *MemoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
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
