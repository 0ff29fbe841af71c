package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Panel is a dashboard panel with the queries of its targets.
type Panel struct {
	Title string
	Exprs []string
}

// Variable is a query variable of a dashboard's templating.
type Variable struct {
	Name string
	// Query is Grafana's label_values(<selector>, <label>).
	Query string
}

// Dashboard is what of a Grafana dashboard a Prometheus answers.
type Dashboard struct {
	Panels    []Panel
	Variables []Variable
}

// ParseDashboard reads a Grafana dashboard's JSON model: its panels (rows
// skipped) and query variables.
func ParseDashboard(raw []byte) (Dashboard, error) {
	var model struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &model); err != nil {
		return Dashboard{}, fmt.Errorf("reading the dashboard: %w", err)
	}
	var d Dashboard
	for _, p := range model.Panels {
		if p.Type == "row" {
			continue
		}
		panel := Panel{Title: p.Title}
		for _, t := range p.Targets {
			panel.Exprs = append(panel.Exprs, t.Expr)
		}
		d.Panels = append(d.Panels, panel)
	}
	for _, v := range model.Templating.List {
		if v.Type != "query" {
			continue
		}
		// Grafana keeps the query as a string or as {"query": "..."}.
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			if err := json.Unmarshal(v.Query, &q.Query); err != nil {
				return Dashboard{}, fmt.Errorf("variable %s: unreadable query: %w", v.Name, err)
			}
		}
		d.Variables = append(d.Variables, Variable{Name: v.Name, Query: q.Query})
	}
	return d, nil
}

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// Check runs the dashboard against a Prometheus as Grafana would show it
// over [start, end]: each variable set to all the values its own query
// finds, then every query of every panel over the range. It returns one
// problem per variable without values and per query that fails or returns
// no series, each naming its panel.
func (d Dashboard) Check(ctx context.Context, c *Client, start, end time.Time) ([]string, error) {
	var problems []string
	vars := map[string]string{
		// Grafana's built-ins, as it sets them for a range this long.
		"__rate_interval": "1m", "__interval": "15s", "__range": fmt.Sprintf("%ds", int(end.Sub(start).Seconds())),
	}
	for _, v := range d.Variables {
		m := labelValues.FindStringSubmatch(strings.TrimSpace(v.Query))
		if m == nil {
			return nil, fmt.Errorf("variable %s: only label_values(selector, label) is supported, not %q", v.Name, v.Query)
		}
		values, err := c.LabelValues(ctx, m[2], m[1])
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		if len(values) == 0 {
			problems = append(problems, fmt.Sprintf("variable %s: %s has no values", v.Name, v.Query))
		}
		quoted := make([]string, len(values))
		for i, val := range values {
			quoted[i] = regexp.QuoteMeta(val)
		}
		// A multi-value variable in a regex matcher, as Grafana formats it.
		vars[v.Name] = "(" + strings.Join(quoted, "|") + ")"
	}
	step := max(5*time.Second, end.Sub(start)/300)
	// The steps end at end, so that the latest samples count however short the range.
	start = end.Add(-end.Sub(start).Truncate(step))
	for _, p := range d.Panels {
		if len(p.Exprs) == 0 {
			problems = append(problems, fmt.Sprintf("panel %q: no query", p.Title))
		}
		for _, expr := range p.Exprs {
			q, err := substitute(expr, vars)
			if err != nil {
				problems = append(problems, fmt.Sprintf("panel %q: %v", p.Title, err))
				continue
			}
			series, err := c.QueryRange(ctx, q, start, end, step)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("panel %q: %s: %v", p.Title, q, err))
			case len(series) == 0:
				problems = append(problems, fmt.Sprintf("panel %q shows nothing: %s returned no series", p.Title, q))
			}
		}
	}
	return problems, nil
}

var variableRef = regexp.MustCompile(`\$\{([a-zA-Z0-9_]+)(?::[a-z]+)?\}|\[\[([a-zA-Z0-9_]+)\]\]|\$([a-zA-Z0-9_]+)`)

// substitute replaces Grafana's variable references ($name, ${name},
// [[name]]) in expr; an unknown one is an error.
func substitute(expr string, vars map[string]string) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		v, ok := vars[name]
		if !ok {
			unknown = append(unknown, ref)
			return ref
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("%s: unknown variables %v", expr, unknown)
	}
	return out, nil
}
