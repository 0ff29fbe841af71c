package publish_test

import (
	"testing"

	"github.com/lifecycle-manager/kcp-operator/internal/publish"
)

// BenchmarkCheckAndBuild measures what publish does before it pushes:
// reading and packing the module, rendering it as the operator does,
// checking the default CR, building descriptor, template and release meta.
func BenchmarkCheckAndBuild(b *testing.B) {
	for name, req := range map[string]publish.Request{
		"raw-manifest-folder": {
			Name: "sample", Version: "0.1.0", Manifests: "testdata/raw", DefaultCR: "testdata/default-cr.yaml",
			Registry: "registry.example.com/modules", Channels: []string{"regular"}, DryRun: true,
		},
		"helm-chart-folder-with-config": {
			Name: "sample", Version: "0.3.0", Chart: "testdata/chart/sample", Config: "testdata/chart-config.yaml",
			DefaultCR: "testdata/default-cr.yaml", Registry: "registry.example.com/modules", Channels: []string{"regular"}, DryRun: true,
		},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := publish.Publish(b.Context(), req, publish.Access{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
