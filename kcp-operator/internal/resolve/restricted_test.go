package resolve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

const accountLabel = "kyma-project.io/global-account-id"

func restrictedTo(meta v1beta2.ModuleReleaseMeta, account string) v1beta2.ModuleReleaseMeta {
	meta.Spec.KymaSelector = &metav1.LabelSelector{MatchLabels: map[string]string{accountLabel: account}}
	return meta
}

func TestRestrictedModuleResolvesOnlyForTheKymasItSelects(t *testing.T) {
	empty := releaseMeta("nobody", map[string]string{"regular": "1.0.0"})
	empty.Spec.KymaSelector = &metav1.LabelSelector{}
	r := resolve.New(catalogReader(t,
		[]v1beta2.ModuleTemplate{template(t, "secret", "1.0.0", ""), template(t, "nobody", "1.0.0", "")},
		[]v1beta2.ModuleReleaseMeta{restrictedTo(releaseMeta("secret", map[string]string{"regular": "1.0.0"}), "ga-1"), empty}))
	selected := newKyma("", map[string]string{accountLabel: "ga-1"})
	other := newKyma("", map[string]string{accountLabel: "ga-2"})

	m, err := r.Resolve(t.Context(), selected, v1beta2.Module{Name: "secret"})
	require.NoError(t, err)
	assert.Equal(t, "1.0.0", m.Version)

	tests := []struct {
		name   string
		kyma   *v1beta2.Kyma
		module string
	}{
		{"another account's Kyma", other, "secret"},
		{"an unlabelled Kyma", newKyma("", nil), "secret"},
		{"by its template's name", other, ns + "/secret-1.0.0"},
		{"by its component name", other, "kyma-project.io/module/secret"},
		{"a selector that selects by nothing", selected, "nobody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(t.Context(), tt.kyma, v1beta2.Module{Name: tt.module})
			var resErr *resolve.Error
			require.ErrorAs(t, err, &resErr, "a user-facing resolution error")
			assert.Contains(t, err.Error(), "is restricted and not available for this Kyma")
		})
	}
}

func TestRestrictedMandatoryModuleIsOnlyForTheKymasItSelects(t *testing.T) {
	meta := restrictedTo(releaseMeta("guard", nil), "ga-1")
	meta.Spec.Mandatory = &v1beta2.Mandatory{Version: "1.0.0"}
	r := resolve.New(catalogReader(t, []v1beta2.ModuleTemplate{template(t, "guard", "1.0.0", "")}, []v1beta2.ModuleReleaseMeta{meta}))

	modules, errs := r.Mandatory(t.Context(), newKyma("", map[string]string{accountLabel: "ga-1"}))
	require.Empty(t, errs)
	require.Len(t, modules, 1)
	assert.Equal(t, "guard", modules[0].Name)

	modules, errs = r.Mandatory(t.Context(), newKyma("", map[string]string{accountLabel: "ga-2"}))
	require.Empty(t, errs)
	assert.Empty(t, modules, "a Kyma the selector does not select gets no restricted mandatory module")
}

func TestSelects(t *testing.T) {
	kyma := newKyma("", map[string]string{accountLabel: "ga-1", "tier": "gold"})
	tests := []struct {
		name     string
		selector *metav1.LabelSelector
		want     bool
		wantErr  bool
	}{
		{name: "no selector: every Kyma", want: true},
		{name: "an empty selector: no Kyma", selector: &metav1.LabelSelector{}},
		{name: "matching labels", selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}, want: true},
		{name: "an expression", selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: accountLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"ga-1"}}}}},
		{name: "an invalid operator", wantErr: true, selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: "Near"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := releaseMeta("m", nil)
			meta.Spec.KymaSelector = tt.selector
			got, err := resolve.Selects(&meta, kyma)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
