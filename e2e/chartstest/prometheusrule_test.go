package chartstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/lifecycle-manager/e2e/promtest"
)

// alertMetric matches the metric names of this project in an alert's PromQL.
var alertMetric = regexp.MustCompile(`\b((?:lifecycle_manager|listener|skr_agent)_[a-z0-9_]+)`)

// renderedRules renders the chart with its PrometheusRule and returns its spec.
func renderedRules(t *testing.T) map[string]any {
	t.Helper()
	objs := mustRender(t, set(baseValues(), "prometheusRule.enabled", true), "kcp-system")
	return field(t, objs.one(t, "PrometheusRule"), "spec").(map[string]any)
}

func TestPrometheusRule(t *testing.T) {
	assert.Empty(t, mustRender(t, baseValues(), "kcp-system").all("PrometheusRule"), "off by default, like the ServiceMonitor")

	v := set(set(baseValues(), "prometheusRule.enabled", true), "prometheusRule.labels", map[string]any{"release": "prometheus"})
	set(v, "prometheusRule.alertLabels", map[string]any{"team": "lifecycle"})
	set(v, "prometheusRule.moduleErrorFor", "2h")
	rule := mustRender(t, v, "kcp-system").one(t, "PrometheusRule")
	assert.Equal(t, "prometheus", rule.GetLabels()["release"])
	spec := field(t, rule, "spec").(map[string]any)
	var exprs []string
	for _, g := range spec["groups"].([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			name := r["alert"].(string)
			assert.Equal(t, "lifecycle", r["labels"].(map[string]any)["team"], "%s carries alertLabels", name)
			assert.Contains(t, []any{"critical", "warning"}, r["labels"].(map[string]any)["severity"], name)
			expr := r["expr"].(string)
			if strings.HasPrefix(name, "LifecycleManager") {
				assert.Contains(t, expr, `job="kcp-operator-metrics"`, "%s selects this release's series", name)
			}
			if name == "LifecycleManagerModuleInError" {
				assert.Equal(t, "2h", r["for"])
			}
			exprs = append(exprs, expr)
		}
	}

	// Every metric of this project that an alert reads is defined by the code.
	used := map[string]bool{}
	for _, e := range exprs {
		for _, m := range alertMetric.FindAllStringSubmatch(e, -1) {
			used[m[1]] = true
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range used {
			if !yield(n) {
				return
			}
		}
	})
	defined := definedMetrics(t, names)
	for _, n := range names {
		assert.True(t, defined[n], "an alert reads %s, which no Go code of the repository defines", n)
	}
}

// promtoolTests is the promtool unit test file of the chart's alerts;
// rule_files is filled in with the rendered rules.
var promtoolTests = filepath.Join("testdata", "alerts-promtool-test.yaml")

// TestAlertsWithPromtool renders the chart's alert rules and runs
// `promtool test rules` on recorded series: every alert has a case in
// which it fires and one in which it does not.
func TestAlertsWithPromtool(t *testing.T) {
	spec := renderedRules(t)
	runPromtool(t, spec, promtoolTests, promtest.Alerts(spec))
}

// TestShardAlertsWithPromtool runs the promtool cases of the alerts that
// change with shards, on the rules rendered for three shards.
func TestShardAlertsWithPromtool(t *testing.T) {
	objs := mustRender(t, set(shardValues(), "prometheusRule.enabled", true), "kcp-system")
	spec := field(t, objs.one(t, "PrometheusRule"), "spec").(map[string]any)
	runPromtool(t, spec, filepath.Join("testdata", "alerts-shards-promtool-test.yaml"),
		[]string{"LifecycleManagerDown", "LifecycleManagerListenerWithoutLeader", "LifecycleManagerKymaInError"})
}

// runPromtool runs `promtool test rules` with the test file testsFile on
// the rules of spec; each of alerts must have a case in which it fires and
// one in which it stays quiet.
func runPromtool(t *testing.T, spec map[string]any, testsFile string, alerts []string) {
	t.Helper()
	dir, err := promtest.Binaries(t.Context(), repoRoot)
	require.NoError(t, err, "promtool is needed for this test")
	rules, err := promtest.RulesFile(spec)
	require.NoError(t, err)

	raw, err := os.ReadFile(testsFile)
	require.NoError(t, err)
	var tests map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &tests))
	firing, quiet := promtoolCases(t, testsFile, tests)
	for _, alert := range alerts {
		assert.True(t, firing[alert], "%s has no case in %s in which it fires", alert, testsFile)
		assert.True(t, quiet[alert], "%s has no case in %s in which it stays quiet", alert, testsFile)
	}

	tmp := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "rules.yaml"), rules, 0o600))
	tests["rule_files"] = []string{"rules.yaml"}
	out, err := yaml.Marshal(tests)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "tests.yaml"), out, 0o600))

	start := time.Now()
	cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "promtool"), "test", "rules", "tests.yaml")
	cmd.Dir = tmp
	got, err := cmd.CombinedOutput()
	t.Logf("promtool test rules took %s", time.Since(start).Round(time.Millisecond))
	require.NoError(t, err, "promtool test rules:\n%s\nthe rules:\n%s", got, rules)
}

// promtoolCases reports which alerts a promtool test file expects to fire
// (exp_alerts not empty) and to stay quiet (empty) at some eval_time.
func promtoolCases(t *testing.T, file string, tests map[string]any) (firing, quiet map[string]bool) {
	t.Helper()
	firing, quiet = map[string]bool{}, map[string]bool{}
	list, ok := tests["tests"].([]any)
	require.True(t, ok, "%s has no tests", file)
	for _, tc := range list {
		cases, _ := tc.(map[string]any)["alert_rule_test"].([]any)
		for _, c := range cases {
			c := c.(map[string]any)
			name, _ := c["alertname"].(string)
			if exp, _ := c["exp_alerts"].([]any); len(exp) > 0 {
				firing[name] = true
			} else {
				quiet[name] = true
			}
		}
	}
	return firing, quiet
}
