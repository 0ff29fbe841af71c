package chartstest

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pendingMetrics are metrics the dashboard charts that the code does not
// define yet. The test fails once one is defined, so that it leaves this list.
var pendingMetrics = []string{}

// ownMetric matches the metric names of this project in PromQL.
var ownMetric = regexp.MustCompile(`\b((?:lifecycle_manager|listener)_[a-z0-9_]+)`)

type dashboard struct {
	UID    string `json:"uid"`
	Title  string `json:"title"`
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "dashboards", "kcp-operator.json"))
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	require.NotEmpty(t, d.UID)

	charted := map[string]bool{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q charts nothing", p.Title)
		for _, target := range p.Targets {
			assert.Contains(t, target.Expr, `job=~"$job"`, "panel %q: every query follows the job variable", p.Title)
			for _, m := range ownMetric.FindAllStringSubmatch(target.Expr, -1) {
				charted[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m[1], "_bucket"), "_sum"), "_count")] = true
			}
		}
	}
	// What the dashboard must show: states, reconcile durations, the runtime
	// client cache, purges, the listener and certificate expiry.
	for _, must := range []string{
		"lifecycle_manager_kymas", "lifecycle_manager_modules", "lifecycle_manager_kyma_state",
		"lifecycle_manager_kyma_reconcile_duration_seconds",
		"lifecycle_manager_runtime_clients", "lifecycle_manager_kyma_purges_total", "listener_requests_total",
		"listener_request_duration_seconds", "lifecycle_manager_certificate_expiry_timestamp_seconds",
	} {
		assert.True(t, charted[must], "the dashboard does not chart %s", must)
	}

	defined := definedMetrics(t, slices.Collect(maps.Keys(charted)))
	for _, name := range slices.Sorted(maps.Keys(charted)) {
		if slices.Contains(pendingMetrics, name) {
			assert.False(t, defined[name], "%s is defined now: remove it from pendingMetrics", name)
			continue
		}
		assert.True(t, defined[name], "the dashboard charts %s, which no Go code of the repository defines", name)
	}

	objs := mustRender(t, baseValues(), "lifecycle-manager")
	cm := objs.one(t, "ConfigMap")
	assert.Equal(t, "1", cm.GetLabels()["grafana_dashboard"], "the Grafana sidecar finds it by this label")
	assert.JSONEq(t, string(raw), field(t, cm, "data", "lifecycle-manager-kcp-operator.json").(string))
}

// definedMetrics reports which names a non-test Go file of the repository
// defines: as one string literal ("lifecycle_manager_kyma_state"), or as a
// namespace and a name in one package ("listener" and "requests_total").
func definedMetrics(t *testing.T, names []string) map[string]bool {
	t.Helper()
	literals := map[string]map[string]bool{} // package directory → string literals
	literal := regexp.MustCompile(`"([a-z0-9_]+)"`)
	err := filepath.WalkDir(repoRoot, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" || e.Name() == "bin") && path != repoRoot {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		if literals[dir] == nil {
			literals[dir] = map[string]bool{}
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			literals[dir][m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	out := map[string]bool{}
	for _, name := range names {
		for _, lits := range literals {
			if lits[name] {
				out[name] = true
			}
			for i := strings.Index(name, "_"); i > 0; i = nextUnderscore(name, i) {
				if lits[name[:i]] && lits[name[i+1:]] {
					out[name] = true
				}
			}
		}
	}
	return out
}

func nextUnderscore(s string, i int) int {
	j := strings.Index(s[i+1:], "_")
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
