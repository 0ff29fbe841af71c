package chartstest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
)

// TestHelmLintStrict runs helm lint --strict for the representative values.
func TestHelmLintStrict(t *testing.T) {
	for name, v := range representativeValues() {
		t.Run(name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			lint.Namespace = "lifecycle-manager"
			lint.KubeVersion = &chartutil.KubeVersion{Version: "v1.36.3", Major: "1", Minor: "36"}
			res := lint.Run([]string{chartDir}, v)
			assert.Equal(t, 1, res.TotalChartsLinted)
			assert.Empty(t, res.Errors)
			for _, m := range res.Messages {
				t.Log(m.Error())
			}
		})
	}
}

// TestHelmLintFindsProblems makes sure the lint above can fail: values that
// break the schema are reported.
func TestHelmLintFindsProblems(t *testing.T) {
	lint := action.NewLint()
	lint.Strict = true
	res := lint.Run([]string{chartDir}, set(baseValues(), "listener", map[string]any{"mode": "mesh"}))
	assert.NotEmpty(t, res.Errors)
}
