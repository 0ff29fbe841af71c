package resolve_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/resolve"
)

// Catalog size of the benchmarks: modules with a release meta and a
// version in each of three channels, modules still published the older
// way (one template per channel, no release meta), mandatory modules.
const (
	benchMetaModules   = 50
	benchLegacyModules = 10
	benchMandatory     = 2
)

// letters names module i with letters only, as module names must be.
func letters(i int) string {
	return string([]byte{'a' + byte(i/676%26), 'a' + byte(i/26%26), 'a' + byte(i%26)})
}

// benchCatalog is a KCP catalog of realistic size: 50 modules × 3
// versions with release metas, 10 older modules × 3 channel templates,
// 2 mandatory modules; 186 templates, 52 release metas.
func benchCatalog(b *testing.B) *resolve.Resolver {
	b.Helper()
	var templates []v1beta2.ModuleTemplate
	var metas []v1beta2.ModuleReleaseMeta
	for i := range benchMetaModules {
		name := "module-" + letters(i)
		for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
			templates = append(templates, template(b, name, v, ""))
		}
		metas = append(metas, releaseMeta(name, map[string]string{"regular": "1.0.0", "fast": "1.1.0", "experimental": "1.2.0"}))
	}
	for i := range benchLegacyModules {
		name := "legacy-" + letters(i)
		for minor, ch := range []string{"regular", "fast", "experimental"} {
			templates = append(templates, template(b, name, fmt.Sprintf("2.%d.0", minor), ch))
		}
	}
	for i := range benchMandatory {
		name := "mandatory-" + letters(i)
		templates = append(templates, template(b, name, "1.0.0", ""))
		meta := releaseMeta(name, nil)
		meta.Spec.Mandatory = &v1beta2.Mandatory{Version: "1.0.0"}
		metas = append(metas, meta)
	}
	return resolve.New(catalogReader(b, templates, metas))
}

// BenchmarkResolveModule resolves one module of a Kyma through the cache
// indexes: by its release meta (the current way) and by the channel of
// its templates (modules without a release meta).
func BenchmarkResolveModule(b *testing.B) {
	r := benchCatalog(b)
	kyma := newKyma("fast", nil)
	for _, bc := range []struct {
		name, module, version string
	}{
		{"release-meta", "module-abc", "1.1.0"},
		{"templates-by-channel", "legacy-aae", "2.1.0"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := r.Resolve(b.Context(), kyma, v1beta2.Module{Name: bc.module})
			require.NoError(b, err)
			require.Equal(b, bc.version, m.Version)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Resolve(b.Context(), kyma, v1beta2.Module{Name: bc.module}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResolveKyma resolves what one Kyma reconcile resolves: its 5
// listed modules (4 with release metas, one of them on its own channel,
// and one older module) and the mandatory modules.
func BenchmarkResolveKyma(b *testing.B) {
	r := benchCatalog(b)
	kyma := newKyma("regular", nil)
	kyma.Spec.Modules = []v1beta2.Module{
		{Name: "module-aaa"}, {Name: "module-abc"}, {Name: "module-abx", Channel: "fast"},
		{Name: "kyma-project.io/module/module-aax"}, {Name: "legacy-aaf"},
	}
	resolveAll := func() (int, error) {
		for _, m := range kyma.Spec.Modules {
			if _, err := r.Resolve(b.Context(), kyma, m); err != nil {
				return 0, err
			}
		}
		mandatory, errs := r.Mandatory(b.Context(), kyma)
		if len(errs) > 0 {
			return 0, errs[0]
		}
		return len(kyma.Spec.Modules) + len(mandatory), nil
	}
	n, err := resolveAll()
	require.NoError(b, err)
	require.Equal(b, len(kyma.Spec.Modules)+benchMandatory, n)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := resolveAll(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "modules")
}
