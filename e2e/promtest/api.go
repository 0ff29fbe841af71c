package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client asks a Prometheus server over its HTTP API (/api/v1).
type Client struct {
	URL  string
	HTTP *http.Client
}

// Series is one series of a query's answer: its labels, and its values
// (one for an instant vector, many for a range).
type Series struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
	Values [][]any           `json:"values"`
}

// Query evaluates expr at time at (/api/v1/query); a scalar or string
// answer is returned as one series without labels.
func (c *Client) Query(ctx context.Context, expr string, at time.Time) ([]Series, error) {
	return c.series(ctx, "query", url.Values{"query": {expr}, "time": {unix(at)}})
}

// QueryRange evaluates expr from start to end every step (/api/v1/query_range),
// as a Grafana panel does over its time range.
func (c *Client) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	return c.series(ctx, "query_range", url.Values{
		"query": {expr}, "start": {unix(start)}, "end": {unix(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	})
}

// LabelValues returns the values of label among the series that match
// selects (/api/v1/label/<label>/values), as Grafana's label_values does.
func (c *Client) LabelValues(ctx context.Context, label, match string) ([]string, error) {
	var out []string
	err := c.get(ctx, "label/"+url.PathEscape(label)+"/values", url.Values{"match[]": {match}}, &out)
	return out, err
}

// Rule is a rule as /api/v1/rules reports it.
type Rule struct {
	Name           string    `json:"name"`
	Type           string    `json:"type"`
	Health         string    `json:"health"`
	LastError      string    `json:"lastError"`
	State          string    `json:"state"`
	LastEvaluation time.Time `json:"lastEvaluation"`
}

// RuleGroup is a rule group as /api/v1/rules reports it.
type RuleGroup struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Rules []Rule `json:"rules"`
}

// Rules returns the loaded rule groups with each rule's health (/api/v1/rules).
func (c *Client) Rules(ctx context.Context) ([]RuleGroup, error) {
	var out struct {
		Groups []RuleGroup `json:"groups"`
	}
	err := c.get(ctx, "rules", nil, &out)
	return out.Groups, err
}

// Target is a scrape target as /api/v1/targets reports it.
type Target struct {
	ScrapePool string            `json:"scrapePool"`
	ScrapeURL  string            `json:"scrapeUrl"`
	Health     string            `json:"health"`
	LastError  string            `json:"lastError"`
	Labels     map[string]string `json:"labels"`
}

// Targets returns the active scrape targets (/api/v1/targets).
func (c *Client) Targets(ctx context.Context) ([]Target, error) {
	var out struct {
		ActiveTargets []Target `json:"activeTargets"`
	}
	err := c.get(ctx, "targets", url.Values{"state": {"active"}}, &out)
	return out.ActiveTargets, err
}

func (c *Client) series(ctx context.Context, endpoint string, form url.Values) ([]Series, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := c.post(ctx, endpoint, form, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector", "matrix":
		var s []Series
		if err := json.Unmarshal(data.Result, &s); err != nil {
			return nil, fmt.Errorf("decoding the %s answer: %w", data.ResultType, err)
		}
		return s, nil
	case "scalar", "string":
		var v []any
		if err := json.Unmarshal(data.Result, &v); err != nil {
			return nil, fmt.Errorf("decoding the %s answer: %w", data.ResultType, err)
		}
		return []Series{{Value: v}}, nil
	default:
		return nil, fmt.Errorf("unknown result type %q", data.ResultType)
	}
}

func (c *Client) get(ctx context.Context, endpoint string, query url.Values, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/api/v1/"+endpoint+"?"+query.Encode(), nil)
	if err != nil {
		return fmt.Errorf("asking prometheus for %s: %w", endpoint, err)
	}
	return c.do(req, endpoint, into)
}

func (c *Client) post(ctx context.Context, endpoint string, form url.Values, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/api/v1/"+endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("asking prometheus for %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req, endpoint, into)
}

// do sends req and decodes the data of Prometheus' envelope into into; an
// answer with status "error" is an error with its errorType and message.
func (c *Client) do(req *http.Request, endpoint string, into any) error {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("asking prometheus for %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading prometheus' answer for %s: %w", endpoint, err)
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("prometheus answered %s for %s with no API envelope: %w: %.200s", resp.Status, endpoint, err, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("prometheus answered %s for %s: %s: %s", resp.Status, endpoint, env.ErrorType, env.Error)
	}
	if err := json.Unmarshal(env.Data, into); err != nil {
		return fmt.Errorf("decoding prometheus' answer for %s: %w", endpoint, err)
	}
	return nil
}

func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}
