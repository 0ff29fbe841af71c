package maintenance

import (
	"errors"
	"fmt"
	"time"
)

// ErrPolicyUnusable means the policy could not be read or parsed: upgrades
// that need downtime wait until it is fixed.
var ErrPolicyUnusable = errors.New("the maintenance policy is unusable")

// ErrNoWindow means the policy has no window ahead for a runtime: its rule
// and its default give only dated windows that are over.
var ErrNoWindow = errors.New("the maintenance policy has no window ahead for this runtime")

// Request is one module version change to decide on.
type Request struct {
	// Now is the time of the decision.
	Now time.Time
	// Labels are the Kyma's labels, which policy rules match.
	Labels map[string]string
	// SkipWindows is the Kyma's spec.skipMaintenanceWindows.
	SkipWindows bool
	// Installed is the version installed now, "" for a first install;
	// Offered the version the channel offers.
	Installed, Offered string
	// RequiresDowntime is the offered template's spec.requiresDowntime.
	RequiresDowntime bool
}

// Decision says whether the change may run now.
type Decision struct {
	// Allowed says the change may run now.
	Allowed bool
	// Window is the window the policy gave: the open one when Allowed by
	// it, else the next one. Zero when no window was needed.
	Window Period
	// Rule names the policy rule that gave the window ("" for the default).
	Rule string
	// Reason says why, for logs and messages.
	Reason string
}

// Decide decides on req. policy is nil when none is configured; policyErr
// is the error of reading it, if any. An error means the change may not
// run and someone must fix the policy; the Decision still says why.
func Decide(req Request, policy *Policy, policyErr error) (Decision, error) {
	switch {
	case req.Installed == "":
		return Decision{Allowed: true, Reason: "a first install needs no maintenance window"}, nil
	case req.Installed == req.Offered:
		return Decision{Allowed: true, Reason: "the version does not change"}, nil
	case !req.RequiresDowntime:
		return Decision{Allowed: true, Reason: "version " + req.Offered + " requires no downtime"}, nil
	case req.SkipWindows:
		return Decision{Allowed: true, Reason: "the Kyma skips maintenance windows"}, nil
	case policyErr != nil:
		err := fmt.Errorf("%w: %w", ErrPolicyUnusable, policyErr)
		return Decision{Reason: err.Error()}, err
	case policy == nil:
		return Decision{Allowed: true, Reason: "no maintenance policy is configured"}, nil
	}
	windows, rule := policy.windowsFor(req.Labels)
	p, ok := earliest(windows, req.Now)
	if !ok {
		rule = ""
		if p, ok = policy.def.next(req.Now); !ok {
			return Decision{Reason: ErrNoWindow.Error()}, ErrNoWindow
		}
	}
	d := Decision{Allowed: p.Contains(req.Now), Window: p, Rule: rule}
	source := "the default window"
	if rule != "" {
		source = "rule " + rule
	}
	if d.Allowed {
		d.Reason = fmt.Sprintf("the maintenance window %s (%s) is open", p, source)
	} else {
		d.Reason = fmt.Sprintf("the next maintenance window is %s (%s)", p, source)
	}
	return d, nil
}
