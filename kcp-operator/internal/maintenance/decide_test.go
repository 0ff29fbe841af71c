package maintenance_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/maintenance"
)

// 2025-03-01 is a Saturday; Europe/Berlin is at +01:00 until daylight
// saving starts on Sunday 2025-03-30 at 02:00 (then +02:00).
const testPolicy = `
timeZone: Europe/Berlin
rules:
  - name: tokyo
    match: {region: ap-northeast-1}
    windows:
      - days: [Wed]
        begin: "02:00"
        end: "04:00"
        timeZone: Asia/Tokyo
  - name: night
    match: {plan: "trial|free"}
    windows:
      - days: [sunday]
        begin: "22:00"
        end: "02:00"
  - name: dated
    match: {globalAccountID: ga-1, platformRegion: cf-eu10}
    windows:
      - begin: "2025-03-01T20:00:00Z"
        end: "2025-03-02T00:00:00Z"
      - begin: "2025-03-08T20:00:00Z"
        end: "2025-03-09T00:00:00Z"
  - name: offset
    match: {region: us-east-1}
    windows:
      - days: [Fri]
        begin: "20:00Z"
        end: "21:00Z"
  - name: dst
    match: {region: eu-central-1}
    windows:
      - days: [Sun]
        begin: "01:00"
        end: "04:00"
default:
  days: [Sat]
  begin: "20:00"
  end: "00:00"
`

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDecide(t *testing.T) {
	policy, err := maintenance.Parse([]byte(testPolicy))
	require.NoError(t, err)
	broken := errors.New("reading the maintenance policy: open /etc/policy.yaml: no such file or directory")
	pastOnly, err := maintenance.Parse([]byte(`default: {begin: "2020-01-01T00:00:00Z", end: "2020-01-02T00:00:00Z"}`))
	require.NoError(t, err)

	upgrade := func(now string, labels map[string]string) maintenance.Request {
		return maintenance.Request{Now: utc(now), Labels: labels, Installed: "1.0.0", Offered: "2.0.0", RequiresDowntime: true}
	}
	region := func(r string) map[string]string { return map[string]string{shared.RegionLabel: r} }
	plan := func(p string) map[string]string { return map[string]string{shared.PlanLabel: p} }
	const closedSat = "2025-03-01T18:00:00Z" // 19:00 in Berlin: before the default window

	tests := []struct {
		name      string
		req       maintenance.Request
		policy    *maintenance.Policy
		policyErr error
		allowed   bool
		window    string // Period.String(); "" for none
		rule      string
		err       error
	}{
		{name: "a first install never waits", policy: policy, policyErr: broken, allowed: true,
			req: func() maintenance.Request { r := upgrade(closedSat, nil); r.Installed = ""; return r }()},
		{name: "the same version needs no window", policy: policy, allowed: true,
			req: func() maintenance.Request { r := upgrade(closedSat, nil); r.Offered = "1.0.0"; return r }()},
		{name: "a version without downtime needs no window", policy: policy, allowed: true,
			req: func() maintenance.Request { r := upgrade(closedSat, nil); r.RequiresDowntime = false; return r }()},
		{name: "skipMaintenanceWindows upgrades at once", policy: policy, policyErr: broken, allowed: true,
			req: func() maintenance.Request { r := upgrade(closedSat, nil); r.SkipWindows = true; return r }()},
		{name: "without a policy the upgrade runs", req: upgrade(closedSat, nil), allowed: true},
		{name: "an unusable policy stops the upgrade", req: upgrade(closedSat, nil), policy: nil, policyErr: broken,
			err: maintenance.ErrPolicyUnusable},
		{name: "default window closed: the next one the same evening", req: upgrade(closedSat, nil), policy: policy,
			window: "2025-03-01T20:00:00+01:00 to 2025-03-02T00:00:00+01:00"},
		{name: "default window open (its zone, not UTC)", req: upgrade("2025-03-01T19:30:00Z", nil), policy: policy, allowed: true,
			window: "2025-03-01T20:00:00+01:00 to 2025-03-02T00:00:00+01:00"},
		{name: "the end is exclusive", req: upgrade("2025-03-01T23:00:00Z", nil), policy: policy,
			window: "2025-03-08T20:00:00+01:00 to 2025-03-09T00:00:00+01:00"},
		{name: "across midnight: Sunday's window is open on Monday", req: upgrade("2025-03-02T23:30:00Z", plan("trial")), policy: policy,
			allowed: true, rule: "night", window: "2025-03-02T22:00:00+01:00 to 2025-03-03T02:00:00+01:00"},
		{name: "weekly wrap: after Monday's end, next Sunday", req: upgrade("2025-03-03T01:00:00Z", plan("free")), policy: policy,
			rule: "night", window: "2025-03-09T22:00:00+01:00 to 2025-03-10T02:00:00+01:00"},
		{name: "the begin is inclusive", req: upgrade("2025-03-02T21:00:00Z", plan("free")), policy: policy, allowed: true,
			rule: "night", window: "2025-03-02T22:00:00+01:00 to 2025-03-03T02:00:00+01:00"},
		{name: "a window's own zone: Wednesday in Tokyo is Tuesday in UTC", req: upgrade("2025-03-04T18:00:00Z", region("ap-northeast-1")),
			policy: policy, allowed: true, rule: "tokyo", window: "2025-03-05T02:00:00+09:00 to 2025-03-05T04:00:00+09:00"},
		{name: "before it on the same Tokyo day", req: upgrade("2025-03-04T16:00:00Z", region("ap-northeast-1")),
			policy: policy, rule: "tokyo", window: "2025-03-05T02:00:00+09:00 to 2025-03-05T04:00:00+09:00"},
		{name: "an offset instead of a zone", req: upgrade("2025-03-07T20:30:00Z", region("us-east-1")), policy: policy,
			allowed: true, rule: "offset", window: "2025-03-07T20:00:00Z to 2025-03-07T21:00:00Z"},
		{name: "daylight saving starts inside the window", req: upgrade("2025-03-30T01:30:00Z", region("eu-central-1")), policy: policy,
			allowed: true, rule: "dst", window: "2025-03-30T01:00:00+01:00 to 2025-03-30T04:00:00+02:00"},
		{name: "dated: before the first", req: upgrade("2025-03-01T12:00:00Z", account("cf-eu10")), policy: policy,
			rule: "dated", window: "2025-03-01T21:00:00+01:00 to 2025-03-02T01:00:00+01:00"},
		{name: "dated: between the two", req: upgrade("2025-03-02T12:00:00Z", account("cf-eu10")), policy: policy,
			rule: "dated", window: "2025-03-08T21:00:00+01:00 to 2025-03-09T01:00:00+01:00"},
		{name: "dated: inside the second", req: upgrade("2025-03-08T22:00:00Z", account("cf-eu10")), policy: policy,
			allowed: true, rule: "dated", window: "2025-03-08T21:00:00+01:00 to 2025-03-09T01:00:00+01:00"},
		{name: "dated windows over: the default applies (after daylight saving began)", req: upgrade("2025-04-01T12:00:00Z", account("cf-eu10")),
			policy: policy, window: "2025-04-05T20:00:00+02:00 to 2025-04-06T00:00:00+02:00"},
		{name: "any pattern of a rule selects: the account without its platform region", req: upgrade("2025-03-01T12:00:00Z", account("cf-us10")),
			policy: policy, rule: "dated", window: "2025-03-01T21:00:00+01:00 to 2025-03-02T01:00:00+01:00"},
		{name: "any pattern of a rule selects: the platform region without the account", req: upgrade("2025-03-01T12:00:00Z",
			map[string]string{shared.PlatformRegionLabel: "cf-eu10"}), policy: policy,
			rule: "dated", window: "2025-03-01T21:00:00+01:00 to 2025-03-02T01:00:00+01:00"},
		{name: "a pattern matches a value that contains it", req: upgrade("2025-03-02T21:00:00Z", plan("trial-extended")), policy: policy,
			allowed: true, rule: "night", window: "2025-03-02T22:00:00+01:00 to 2025-03-03T02:00:00+01:00"},
		{name: "an empty label is matched by no pattern", req: upgrade(closedSat, map[string]string{shared.RegionLabel: ""}),
			policy: mustParse(t, `default: {days: [Sat], begin: "20:00", end: "00:00"}
rules: [{match: {region: ".*"}, windows: [{days: [Mon], begin: "01:00", end: "02:00"}]}]`),
			window: "2025-03-01T20:00:00Z to 2025-03-02T00:00:00Z"},
		{name: "no window ahead at all", req: upgrade(closedSat, nil), policy: pastOnly, err: maintenance.ErrNoWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := maintenance.Decide(tc.req, tc.policy, tc.policyErr)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.False(t, d.Allowed, "an error never allows the change")
				assert.Equal(t, err.Error(), d.Reason)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.allowed, d.Allowed, d.Reason)
			if tc.window == "" {
				assert.True(t, d.Window.IsZero(), "no window: %s", d.Window)
			} else {
				assert.Equal(t, tc.window, d.Window.String())
				assert.Contains(t, d.Reason, tc.window)
			}
			assert.Equal(t, tc.rule, d.Rule)
			assert.NotEmpty(t, d.Reason)
		})
	}
}

func mustParse(t *testing.T, policy string) *maintenance.Policy {
	t.Helper()
	p, err := maintenance.Parse([]byte(policy))
	require.NoError(t, err)
	return p
}

// account labels a runtime of global account ga-1 in platformRegion.
func account(platformRegion string) map[string]string {
	return map[string]string{shared.GlobalAccountIDLabel: "ga-1", shared.PlatformRegionLabel: platformRegion}
}

func TestUnusablePolicyNamesTheCause(t *testing.T) {
	cause := errors.New("open /etc/policy.yaml: no such file or directory")
	req := maintenance.Request{Now: time.Now(), Installed: "1.0.0", Offered: "2.0.0", RequiresDowntime: true}
	_, err := maintenance.Decide(req, nil, cause)
	require.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "/etc/policy.yaml")
}
