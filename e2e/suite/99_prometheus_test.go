package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/harness"
	"github.com/lifecycle-manager/e2e/promtest"
)

// TestTheDashboardAndAlertsWorkOnTheRunningSystem runs last (file order):
// the suite's Prometheus has scraped the operator, its listener and the
// agents through every scenario. Every panel of the chart's Grafana
// dashboard must show something over the run, and every alert rule of its
// PrometheusRule must evaluate without error.
func TestTheDashboardAndAlertsWorkOnTheRunningSystem(t *testing.T) {
	require.NoError(t, prom.err, "the suite's Prometheus did not start")
	c := &promtest.Client{URL: prom.server.URL}
	start := time.Now()
	defer func() {
		t.Logf("checking the dashboard and the alerts took %s", time.Since(start).Round(time.Millisecond))
	}()

	step(t, "Given Prometheus scraping every target the chart's ServiceMonitor and the agents' metrics ports describe")
	// Every operator target is up, and an agent's: a runtime without a
	// Kyma (in a run of a few scenarios) has none.
	down := "no targets"
	ok := assert.Eventually(t, func() bool {
		targets, err := c.Targets(t.Context())
		if err != nil {
			down = err.Error()
			return false
		}
		down = ""
		agentsUp, agents := 0, 0
		for _, tg := range targets {
			if tg.ScrapePool == agentJobName {
				agents++
				if tg.Health == "up" {
					agentsUp++
				}
				continue
			}
			if tg.Health != "up" {
				down += fmt.Sprintf("\n%s (%s): %s %s", tg.ScrapeURL, tg.ScrapePool, tg.Health, tg.LastError)
			}
		}
		if agents > 0 && agentsUp == 0 {
			down += "\nno agent target up"
		}
		return len(targets) > 0 && down == ""
	}, timeout, time.Second, "the scrape targets up")
	require.True(t, ok, "scrape targets not up (prometheus log: %s):%s", prom.server.Log, down)

	step(t, "Then every panel of the dashboard shows series over the run")
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "charts", "kcp-operator", "dashboards", "kcp-operator.json"))
	require.NoError(t, err)
	d, err := promtest.ParseDashboard(raw)
	require.NoError(t, err)
	require.NotEmpty(t, d.Panels)
	problems, err := d.Check(t.Context(), c, prom.started, time.Now())
	require.NoError(t, err)
	assert.Empty(t, problems, "the dashboard on the running system:\n%s", strings.Join(problems, "\n"))

	step(t, "And every alert rule of the chart evaluates without error")
	var last []string
	var groups []promtest.RuleGroup
	ok = assert.Eventually(t, func() bool {
		if groups, err = c.Rules(t.Context()); err != nil {
			last = []string{err.Error()}
			return false
		}
		last = ruleProblems(groups, prom.alerts, prom.started)
		return len(last) == 0
	}, timeout, time.Second, "the chart's alert rules")
	if !ok {
		t.Errorf("alert rules:\n%s", strings.Join(last, "\n"))
	}
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.State != "inactive" {
				t.Logf("alert %s is %s at the end of the run", r.Name, r.State)
			}
		}
	}
}

// ruleProblems lists the alerts that Prometheus does not have, has not
// evaluated since started, or evaluates with an error.
func ruleProblems(groups []promtest.RuleGroup, alerts []string, started time.Time) []string {
	seen := map[string]promtest.Rule{}
	for _, g := range groups {
		for _, r := range g.Rules {
			seen[r.Name] = r
		}
	}
	var problems []string
	for _, name := range alerts {
		r, found := seen[name]
		switch {
		case !found:
			problems = append(problems, name+": not loaded")
		case r.Health != "ok":
			problems = append(problems, name+": health "+r.Health+": "+r.LastError)
		case r.LastEvaluation.Before(started):
			problems = append(problems, name+": not evaluated yet")
		}
	}
	return problems
}
