package maintenance_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/maintenance"
)

// TestPolicyInThePublicShape reads a policy written as the public lifecycle
// manager's policy.json is (unnamed rules, offsets instead of zones,
// alternatives of region fragments) and checks which rule selects whom: a
// pattern matches a value that contains it, any pattern of a rule selects,
// the first rule that selects wins.
func TestPolicyInThePublicShape(t *testing.T) {
	p, err := maintenance.NewFile(filepath.Join("testdata", "policy.json")).Load()
	require.NoError(t, err)
	const (
		trial   = "2030-01-03T03:00:00Z to 2030-01-03T04:00:00Z"
		europe  = "2030-01-06T20:00:00Z to 2030-01-06T23:00:00Z"
		pilot   = "2030-01-10T20:00:00Z to 2030-01-11T00:00:00Z"
		asia    = "2030-01-05T15:00:00Z to 2030-01-05T18:00:00Z"
		weekend = "2030-01-05T22:00:00Z to 2030-01-06T01:00:00Z"
	)
	tests := []struct {
		name   string
		labels map[string]string
		rule   string // "" for the default
		window string
	}{
		{"a plan of the alternatives", map[string]string{shared.PlanLabel: "free"}, "rules[0]", trial},
		{"a plan that contains one", map[string]string{shared.PlanLabel: "trial-extended"}, "rules[0]", trial},
		{"another plan", map[string]string{shared.PlanLabel: "azure_lite"}, "", weekend},
		{"the first rule that selects wins", map[string]string{shared.PlanLabel: "trial", shared.RegionLabel: "eu-west-1"}, "rules[0]", trial},
		{"a region with a prefix of the alternatives", map[string]string{shared.RegionLabel: "eu-central-1"}, "rules[1]", europe},
		{"a region with a fragment inside", map[string]string{shared.RegionLabel: "westeurope"}, "rules[1]", europe},
		{"a region that is one of the alternatives", map[string]string{shared.RegionLabel: "uksouth"}, "rules[1]", europe},
		{"an Asian region", map[string]string{shared.RegionLabel: "japaneast"}, "rules[3]", asia},
		{"a region no rule names", map[string]string{shared.RegionLabel: "us-east-1"}, "", weekend},
		{"the global account alone", map[string]string{shared.GlobalAccountIDLabel: "ga-pilot-7", shared.RegionLabel: "us-east-1"}, "rules[2]", pilot},
		{"the platform region alone", map[string]string{shared.PlatformRegionLabel: "cf-ap21"}, "rules[2]", pilot},
		{"a pattern with ^ is anchored there", map[string]string{shared.GlobalAccountIDLabel: "x-ga-pilot-7"}, "", weekend},
		{"the account's rule comes before the Asian one", map[string]string{shared.GlobalAccountIDLabel: "ga-pilot-7", shared.RegionLabel: "ap-south-1"}, "rules[2]", pilot},
		{"no labels", nil, "", weekend},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := maintenance.Decide(maintenance.Request{
				Now: utc("2030-01-02T12:00:00Z"), Labels: tc.labels, Installed: "1.0.0", Offered: "2.0.0", RequiresDowntime: true,
			}, p, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.rule, d.Rule)
			assert.Equal(t, tc.window, d.Window.String())
			assert.False(t, d.Allowed)
		})
	}
}

// TestInvalidPatternIsRefusedAtLoad: a pattern that is no regular
// expression makes the whole policy unusable, and the error says where.
func TestInvalidPatternIsRefusedAtLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
  "rules": [
    {"match": {"plan": "trial"}, "windows": [{"days": ["Sun"], "begin": "01:00:00+00:00", "end": "02:00:00+00:00"}]},
    {"name": "emea", "match": {"region": "europe|eu-(|uksouth"}, "windows": [{"days": ["Sat"], "begin": "21:00:00+00:00", "end": "00:00:00+00:00"}]}
  ],
  "default": {"days": ["Sat"], "begin": "21:00:00+00:00", "end": "23:00:00+00:00"}
}`), 0o600))
	p, err := maintenance.NewFile(path).Load()
	require.Error(t, err)
	assert.Nil(t, p)
	for _, want := range []string{path, "rules[1] (emea): match.region", `"europe|eu-(|uksouth" is not a regular expression`, "missing closing )"} {
		assert.Contains(t, err.Error(), want)
	}
}
