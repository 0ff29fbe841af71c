package resolve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// TestNamespacedReferenceStaysInAllowedNamespaces: a Kyma's modules are
// editable by the runtime's admins, and the operator's cache holds every
// watched namespace, other tenants' included. A namespace/name reference
// resolves in the Kyma's own namespace and the template namespaces only.
func TestNamespacedReferenceStaysInAllowedNamespaces(t *testing.T) {
	own := template(t, "istio", "1.9.0", "regular")
	shared := template(t, "istio", "1.10.0", "regular")
	shared.Namespace = "module-catalog"
	foreign := template(t, "istio", "1.11.0", "regular")
	foreign.Namespace = "other-tenant"
	templates := []v1beta2.ModuleTemplate{own, shared, foreign}
	tests := []struct {
		name        string
		allowed     []string
		module      string
		wantVersion string
		wantErr     string
	}{
		{name: "the Kyma's namespace", module: ns + "/istio-1.9.0", wantVersion: "1.9.0"},
		{name: "another watched namespace", module: "other-tenant/istio-1.11.0",
			wantErr: "a ModuleTemplate in namespace other-tenant is not allowed: only the Kyma's namespace kcp-system (more with --template-namespaces)"},
		{name: "a template namespace", allowed: []string{"module-catalog"}, module: "module-catalog/istio-1.10.0", wantVersion: "1.10.0"},
		{name: "not a template namespace", allowed: []string{"module-catalog"}, module: "other-tenant/istio-1.11.0",
			wantErr: "only the Kyma's namespace kcp-system and the template namespaces module-catalog (--template-namespaces)"},
		{name: "a missing template in an allowed namespace", allowed: []string{"module-catalog"}, module: "module-catalog/nothing",
			wantErr: "no ModuleReleaseMeta and no ModuleTemplate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := resolve.New(catalogReader(t, templates, nil), tt.allowed...)
			m, err := r.Resolve(t.Context(), newKyma("", nil), v1beta2.Module{Name: tt.module})
			if tt.wantErr != "" {
				var resErr *resolve.Error
				require.ErrorAs(t, err, &resErr, "a user-facing resolution error: the module is Error with it")
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantVersion, m.Version)
		})
	}
}
