package resolve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

func newKyma(channel string, labels map[string]string) *v1beta2.Kyma {
	return &v1beta2.Kyma{
		ObjectMeta: metav1.ObjectMeta{Name: "kyma", Namespace: ns, Labels: labels},
		Spec:       v1beta2.KymaSpec{Channel: channel},
	}
}

func testCatalog(t *testing.T) *resolve.Resolver {
	t.Helper()
	templates := []v1beta2.ModuleTemplate{
		template(t, "keda", "1.0.0", ""), template(t, "keda", "1.1.0", ""), template(t, "keda", "1.2.0", ""),
		template(t, "serverless", "2.0.0", ""),
		template(t, "preview", "0.1.0", ""),
		template(t, "istio", "1.9.0", "regular"), template(t, "istio", "1.10.0", "regular"), template(t, "istio", "1.11.0", "fast"),
		template(t, "crash", "1.0.0", ""),
		template(t, "labelled-beta", "1.0.0", ""), template(t, "labelled-internal", "1.0.0", ""),
	}
	templates[len(templates)-3].Spec.Descriptor.Raw = []byte(`{"component": 7}`)
	// Gated only by their templates' labels; their release metas say nothing.
	metav1.SetMetaDataLabel(&templates[len(templates)-2].ObjectMeta, shared.BetaLabel, shared.EnabledValue)
	metav1.SetMetaDataLabel(&templates[len(templates)-1].ObjectMeta, shared.InternalLabel, shared.EnabledValue)
	beta := releaseMeta("preview", map[string]string{"regular": "0.1.0"})
	beta.Spec.Beta = true
	metas := []v1beta2.ModuleReleaseMeta{
		releaseMeta("keda", map[string]string{"regular": "1.0.0", "fast": "1.1.0", "experimental": "1.2.0"}),
		releaseMeta("serverless", map[string]string{"regular": "2.0.0"}),
		releaseMeta("crash", map[string]string{"regular": "1.0.0"}),
		releaseMeta("labelled-beta", map[string]string{"regular": "1.0.0"}),
		releaseMeta("labelled-internal", map[string]string{"regular": "1.0.0"}),
		beta,
	}
	return resolve.New(catalogReader(t, templates, metas))
}

func TestResolve(t *testing.T) {
	r := testCatalog(t)
	betaLabels := map[string]string{shared.BetaLabel: shared.EnabledValue}
	tests := []struct {
		name        string
		kyma        *v1beta2.Kyma
		module      v1beta2.Module
		wantVersion string
		wantChannel string
		wantErr     string
	}{
		{name: "release meta, default channel", kyma: newKyma("", nil), module: v1beta2.Module{Name: "keda"},
			wantVersion: "1.0.0", wantChannel: "regular"},
		{name: "release meta, the Kyma's channel", kyma: newKyma("experimental", nil), module: v1beta2.Module{Name: "keda"},
			wantVersion: "1.2.0", wantChannel: "experimental"},
		{name: "release meta, the module's channel wins", kyma: newKyma("experimental", nil), module: v1beta2.Module{Name: "keda", Channel: "fast"},
			wantVersion: "1.1.0", wantChannel: "fast"},
		{name: "release meta by OCM component name", kyma: newKyma("", nil), module: v1beta2.Module{Name: "kyma-project.io/module/keda"},
			wantVersion: "1.0.0", wantChannel: "regular"},
		{name: "release meta without the channel", kyma: newKyma("fast", nil), module: v1beta2.Module{Name: "serverless"},
			wantErr: `has no version for channel "fast" (channels: regular)`},
		{name: "beta module for a plain Kyma", kyma: newKyma("", nil), module: v1beta2.Module{Name: "preview"},
			wantErr: "it is a beta module"},
		{name: "beta module for a beta Kyma", kyma: newKyma("", betaLabels), module: v1beta2.Module{Name: "preview"},
			wantVersion: "0.1.0", wantChannel: "regular"},
		{name: "a release meta's template labelled beta, for a plain Kyma", kyma: newKyma("", nil),
			module: v1beta2.Module{Name: "labelled-beta"}, wantErr: "it is a beta module"},
		{name: "a release meta's template labelled beta, for a beta Kyma", kyma: newKyma("", betaLabels),
			module: v1beta2.Module{Name: "labelled-beta"}, wantVersion: "1.0.0", wantChannel: "regular"},
		{name: "a release meta's template labelled internal, for a plain Kyma", kyma: newKyma("", nil),
			module: v1beta2.Module{Name: "labelled-internal"}, wantErr: "internal"},
		{name: "invalid descriptor", kyma: newKyma("", nil), module: v1beta2.Module{Name: "crash"},
			wantErr: "has an invalid descriptor"},
		{name: "templates by channel, the newest wins", kyma: newKyma("", nil), module: v1beta2.Module{Name: "istio"},
			wantVersion: "1.10.0", wantChannel: "regular"},
		{name: "templates by channel, fast", kyma: newKyma("fast", nil), module: v1beta2.Module{Name: "istio"},
			wantVersion: "1.11.0", wantChannel: "fast"},
		{name: "templates by channel, none in it", kyma: newKyma("experimental", nil), module: v1beta2.Module{Name: "istio"},
			wantErr: `no ModuleTemplate for channel "experimental" (templates exist for channels: fast, regular)`},
		{name: "template by namespace/name", kyma: newKyma("", nil), module: v1beta2.Module{Name: ns + "/istio-1.9.0"},
			wantVersion: "1.9.0", wantChannel: "regular"},
		{name: "template by OCM component name", kyma: newKyma("fast", nil), module: v1beta2.Module{Name: "kyma-project.io/module/istio"},
			wantVersion: "1.11.0", wantChannel: "fast"},
		{name: "unknown module", kyma: newKyma("", nil), module: v1beta2.Module{Name: "nothing"},
			wantErr: "no ModuleReleaseMeta and no ModuleTemplate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := r.Resolve(t.Context(), tt.kyma, tt.module)
			if tt.wantErr != "" {
				var resErr *resolve.Error
				require.ErrorAs(t, err, &resErr, "a user-facing resolution error")
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantVersion, m.Version)
			assert.Equal(t, tt.wantChannel, m.Channel)
			assert.Equal(t, tt.module.Name, m.Name)
			assert.Equal(t, m.ModuleName+"-"+tt.wantVersion, m.Template.Name)
			assert.Equal(t, "kyma-project.io/module/"+m.ModuleName, m.FQDN, "the FQDN comes from the descriptor")
		})
	}
}

func TestMandatory(t *testing.T) {
	viaMeta := releaseMeta("btp-operator", nil)
	viaMeta.Spec.Mandatory = &v1beta2.Mandatory{Version: "1.1.0"}
	legacyOld, legacyNew := template(t, "telemetry", "1.0.0", ""), template(t, "telemetry", "1.2.0", "")
	legacyOld.Spec.Mandatory, legacyNew.Spec.Mandatory = true, true
	beta := template(t, "experiment", "0.1.0", "")
	beta.Spec.Mandatory = true
	beta.Labels = map[string]string{shared.BetaLabel: shared.EnabledValue}
	// Mandatory by its release meta, internal by its template's label only.
	internalMeta := releaseMeta("audit", nil)
	internalMeta.Spec.Mandatory = &v1beta2.Mandatory{Version: "1.0.0"}
	internal := template(t, "audit", "1.0.0", "")
	metav1.SetMetaDataLabel(&internal.ObjectMeta, shared.InternalLabel, shared.EnabledValue)
	templates := []v1beta2.ModuleTemplate{
		template(t, "btp-operator", "1.0.0", ""), template(t, "btp-operator", "1.1.0", ""),
		legacyOld, legacyNew, beta, template(t, "keda", "1.0.0", ""), internal,
	}
	r := resolve.New(catalogReader(t, templates, []v1beta2.ModuleReleaseMeta{
		viaMeta, internalMeta, releaseMeta("keda", map[string]string{"regular": "1.0.0"}),
	}))

	modules, errs := r.Mandatory(t.Context(), newKyma("", nil))
	require.Empty(t, errs)
	got := map[string]string{}
	for _, m := range modules {
		assert.True(t, m.Mandatory)
		got[m.Name] = m.Version
	}
	assert.Equal(t, map[string]string{"btp-operator": "1.1.0", "telemetry": "1.2.0"}, got,
		"the release meta's version, the newest legacy template, no gated or optional module")
}
