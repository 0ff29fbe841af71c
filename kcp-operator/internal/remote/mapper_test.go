package remote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lifecycle-manager/kcp-operator/internal/remote"
)

// countingMapper counts the lookups that reach it.
type countingMapper struct {
	meta.RESTMapper
	lookups int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.lookups++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

func TestMappingsAtAVersionAreRemembered(t *testing.T) {
	deployments := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	base := meta.NewDefaultRESTMapper([]schema.GroupVersion{deployments.GroupVersion()})
	base.Add(deployments, meta.RESTScopeNamespace)
	inner := &countingMapper{RESTMapper: base}
	m := remote.NewMemoMapper(inner)

	tests := []struct {
		name        string
		gk          schema.GroupKind
		versions    []string
		wantErr     bool
		wantLookups int
	}{
		{name: "first lookup asks the mapper", gk: deployments.GroupKind(), versions: []string{"v1"}, wantLookups: 1},
		{name: "second is remembered", gk: deployments.GroupKind(), versions: []string{"v1"}, wantLookups: 1},
		{name: "without a version it asks", gk: deployments.GroupKind(), wantLookups: 2},
		{name: "an unknown kind fails", gk: schema.GroupKind{Group: "example.com", Kind: "Thing"}, versions: []string{"v1"}, wantErr: true, wantLookups: 3},
		{name: "and is asked again", gk: schema.GroupKind{Group: "example.com", Kind: "Thing"}, versions: []string{"v1"}, wantErr: true, wantLookups: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.RESTMapping(tt.gk, tt.versions...)
			assert.Equal(t, tt.wantLookups, inner.lookups)
			if tt.wantErr {
				assert.True(t, meta.IsNoMatchError(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "deployments", got.Resource.Resource)
			assert.Equal(t, meta.RESTScopeNameNamespace, got.Scope.Name())
		})
	}
}
