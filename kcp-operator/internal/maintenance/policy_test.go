package maintenance_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/kcp-operator/internal/maintenance"
)

func TestParseRefusesBadPolicies(t *testing.T) {
	const okDefault = "default: {days: [Sat], begin: \"20:00\", end: \"23:00\"}\n"
	tests := []struct {
		name, policy string
		want         []string // each appears in the error
	}{
		{"not YAML", "rules: [", []string{"decoding"}},
		{"a misspelt key (the public policy's timeBegin)", "default: {days: [Sat], timeBegin: \"20:00\", timeEnd: \"23:00\"}",
			[]string{"unknown field", "timeBegin"}},
		{"no default", "rules: []", []string{"default: missing"}},
		{"an unknown zone", "timeZone: Mars/Olympus\n" + okDefault, []string{"timeZone", "Mars/Olympus"}},
		{"an unknown day", "default: {days: [Sat, Caturday], begin: \"20:00\", end: \"23:00\"}", []string{"default: days", "Caturday"}},
		{"a time of day out of range", "default: {days: [Sat], begin: \"25:00\", end: \"23:00\"}", []string{"default: begin", "25:00"}},
		{"an offset and a zone", "default: {days: [Sat], begin: \"20:00Z\", end: \"23:00Z\", timeZone: Europe/Berlin}",
			[]string{"timeZone and an offset"}},
		{"an offset on one end only", "default: {days: [Sat], begin: \"20:00Z\", end: \"23:00\"}", []string{"same offset"}},
		{"a dated window that ends before it begins", okDefault + `rules: [{match: {plan: trial}, windows: [{begin: "2025-03-02T00:00:00Z", end: "2025-03-01T00:00:00Z"}]}]`,
			[]string{"rules[0]: windows[0]: end", "not after begin"}},
		{"a dated window with a time of day", okDefault + `rules: [{match: {plan: trial}, windows: [{begin: "20:00", end: "22:00"}]}]`,
			[]string{"rules[0]: windows[0]", "without days is dated"}},
		{"a rule without a match", okDefault + `rules: [{windows: [{days: [Mon], begin: "01:00", end: "02:00"}]}]`,
			[]string{"rules[0]: match"}},
		{"a rule without windows", okDefault + `rules: [{match: {region: eu-west-1}}]`, []string{"rules[0]: windows: none"}},
		{"a pattern that does not compile", okDefault + `rules: [{match: {region: "eu-("}, windows: [{days: [Mon], begin: "01:00", end: "02:00"}]}]`,
			[]string{"rules[0]: match.region"}},
		{"every problem at once", `rules: [{match: {plan: trial}, windows: [{days: [Mon], begin: "x", end: "02:00"}]}]`,
			[]string{"default: missing", "rules[0]: windows[0]: begin"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := maintenance.Parse([]byte(tc.policy))
			require.Error(t, err)
			assert.Nil(t, p)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestParseAcceptsJSONAndTheFormsOfTime(t *testing.T) {
	p, err := maintenance.Parse([]byte(`{"default": {"days": ["Mon","tuesday"], "begin": "01:00:30", "end": "01:00:30"},
		"rules": [{"match": {"region": "x"}, "windows": [{"begin": "2025-03-01 20:00", "end": "2025-03-01T21:00", "timeZone": "America/New_York"}]}]}`))
	require.NoError(t, err)
	req := maintenance.Request{Installed: "1", Offered: "2", RequiresDowntime: true}

	// Equal begin and end: a whole day, from Monday 01:00:30 UTC.
	req.Now = utc("2025-03-04T01:00:00Z") // Tuesday, still in Monday's window
	d, err := maintenance.Decide(req, p, nil)
	require.NoError(t, err)
	assert.True(t, d.Allowed)
	assert.Equal(t, "2025-03-03T01:00:30Z to 2025-03-04T01:00:30Z", d.Window.String())

	// A local date and time in the window's zone.
	req.Labels = map[string]string{"kyma-project.io/region": "x"}
	d, err = maintenance.Decide(req, p, nil)
	require.NoError(t, err)
	assert.Equal(t, "2025-03-03T01:00:30Z to 2025-03-04T01:00:30Z", d.Window.String(), "the rule's window is over: the default's")
	assert.Empty(t, d.Rule)
	req.Now = utc("2025-03-02T01:30:00Z")
	d, err = maintenance.Decide(req, p, nil)
	require.NoError(t, err)
	assert.True(t, d.Allowed, d.Reason)
	assert.Equal(t, "2025-03-01T20:00:00-05:00 to 2025-03-01T21:00:00-05:00", d.Window.String())
	assert.Equal(t, "rules[0]", d.Rule, "an unnamed rule is named by its place")
}

// TestSamplePolicyParses keeps the sample users start from valid.
func TestSamplePolicyParses(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "api", "config", "samples", "maintenance", "policy.yaml"))
	require.NoError(t, err)
	p, err := maintenance.Parse(raw)
	require.NoError(t, err)
	d, err := maintenance.Decide(maintenance.Request{Now: time.Now(), Installed: "1", Offered: "2", RequiresDowntime: true}, p, nil)
	require.NoError(t, err)
	assert.False(t, d.Window.IsZero())
}

func TestFileIsReadAgainWhenItChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	f := maintenance.NewFile(path)

	_, missing := f.Load()
	require.Error(t, missing, "a missing file is an error, not the absence of a policy")
	assert.Contains(t, missing.Error(), path)
	_, again := f.Load()
	assert.Same(t, missing, again, "unchanged: the same error")

	write := func(content string, mod time.Time) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		require.NoError(t, os.Chtimes(path, mod, mod))
	}
	base := time.Now().Add(-time.Hour)
	write(`default: {days: [Sat], begin: "20:00", end: "23:00"}`, base)
	first, err := f.Load()
	require.NoError(t, err)
	second, err := f.Load()
	require.NoError(t, err)
	assert.Same(t, first, second, "unchanged: not read again")

	write(`default: {days: [Sun], begin: "20:00", end: "23:00"}`, base.Add(time.Second))
	third, err := f.Load()
	require.NoError(t, err)
	assert.NotSame(t, first, third, "a new modification time: read again")

	write(`default: {days: [Sun], begin: "20:00", end: "23:00", typo: 1}`, base.Add(2*time.Second))
	_, err = f.Load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "typo")
	assert.Contains(t, err.Error(), path)

	write(`default: {days: [Mon], begin: "20:00", end: "23:00"}`, base.Add(3*time.Second))
	fixed, err := f.Load()
	require.NoError(t, err)
	assert.NotNil(t, fixed)
}
