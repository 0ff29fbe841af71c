// Package maintenance decides when a module upgrade that needs downtime may
// run: the ModuleTemplate of the new version says spec.requiresDowntime, and
// such an upgrade waits for the runtime's maintenance window unless the Kyma
// says spec.skipMaintenanceWindows. A first install never waits, nor does an
// upgrade whose new version needs no downtime.
//
// # Policy
//
// The windows come from a policy file (YAML or JSON; the operator's
// --maintenance-policy flag names it, the chart mounts it from a ConfigMap):
//
//	timeZone: Europe/Berlin        # of weekly windows that name none; default UTC
//	rules:
//	  - name: trial runtimes       # only for messages
//	    match:                     # regular expressions on the Kyma's labels
//	      plan: "trial|free"       #   kyma-project.io/broker-plan-name
//	      region: "^eu-"           #   kyma-project.io/region
//	      # platformRegion:        #   kyma-project.io/platform-region
//	      # globalAccountID:       #   kyma-project.io/global-account-id
//	    windows:
//	      - days: [Sat, Sun]       # weekly: these days, begin to end
//	        begin: "22:00"
//	        end: "02:00"           # before begin: ends the next day
//	        timeZone: Asia/Tokyo   # an IANA zone; daylight saving applies
//	      - begin: "2025-12-08T20:00:00Z"   # dated: absolute begin and end
//	        end: "2025-12-09T00:00:00Z"
//	default:                       # for runtimes no rule selects
//	  days: [Sat]
//	  begin: "20:00"
//	  end: "00:00"
//
// A rule selects a runtime when any pattern it names matches the value of
// its label, as the public lifecycle manager's policy.json rules do: the
// patterns are Go regular expressions, unanchored ("eu-" matches every
// region that contains it; "^trial$" only the plan trial), and a missing or
// empty label matches none. The first rule that selects a runtime gives its
// windows, and
// when none of them lies ahead any more (dated windows in the past) the
// default window applies. Weekly times are HH:MM or HH:MM:SS, optionally
// with a fixed offset instead of a zone (20:00Z, 20:00+02:00, as the public
// lifecycle manager writes them); equal begin and end mean a whole day.
// Dated times are RFC 3339, or a local date and time in the window's zone.
// Unknown fields are an error, so that a misspelt key is not silently a
// window that never opens; a pattern that does not compile is an error
// naming its rule.
//
// # Decision
//
// Decide is a pure function of the time, the policy, the Kyma's labels and
// the upgrade. Without a policy (no flag) upgrades that need downtime run at
// once, as they did before windows existed; the operator says so in its log
// at startup. A policy that cannot be read or parsed, or that has no window
// ahead for the runtime, is an error: the upgrade does not run, and the
// module shows the error, until the policy is fixed — an operator who asked
// for windows never gets downtime outside them by mistake.
//
// File reads the policy again whenever its modification time or size
// changes, so that an edited ConfigMap takes effect without a restart.
package maintenance
