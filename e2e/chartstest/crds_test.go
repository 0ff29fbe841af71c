package chartstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChartCRDsAreTheGeneratedOnes keeps charts/kcp-operator/crds equal to
// api/config/crd/bases: make generate writes both.
func TestChartCRDsAreTheGeneratedOnes(t *testing.T) {
	generated := filepath.Join(repoRoot, "api", "config", "crd", "bases")
	chartCRDs := filepath.Join(chartDir, "crds")
	want := yamlFiles(t, generated)
	require.Len(t, want, 5, "Kyma, Manifest, ModuleTemplate, ModuleReleaseMeta, Watcher")
	assert.Equal(t, want, yamlFiles(t, chartCRDs), "the chart's crds/ holds exactly the generated CRD files")
	for _, name := range want {
		src, err := os.ReadFile(filepath.Join(generated, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(chartCRDs, name))
		require.NoError(t, err)
		assert.Equal(t, string(src), string(got), "%s is stale: run make generate", name)
	}
}

func yamlFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if !e.IsDir() && filepath.Ext(e.Name()) == ".yaml" {
			names = append(names, e.Name())
		}
	}
	return names
}
