package signature

import (
	"fmt"

	"github.com/lifecycle-manager/api/shared"
)

// Policy says what happens to a module whose signature is missing or
// does not verify.
type Policy string

// The policies, from the weakest.
const (
	// PolicyOff checks nothing.
	PolicyOff Policy = "off"
	// PolicyWarn installs the module and says why it is not verified.
	PolicyWarn Policy = "warn"
	// PolicyEnforce refuses the module.
	PolicyEnforce Policy = "enforce"
)

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case PolicyOff, PolicyWarn, PolicyEnforce:
		return p, nil
	default:
		return "", fmt.Errorf("%q is not a signature policy: want %s, %s or %s", s, PolicyOff, PolicyWarn, PolicyEnforce)
	}
}

func (p Policy) rank() int {
	switch p {
	case PolicyWarn:
		return 1
	case PolicyEnforce:
		return 2
	default:
		return 0
	}
}

// Raise returns the stricter of p and q.
func (p Policy) Raise(q Policy) Policy {
	if q.rank() > p.rank() {
		return q
	}
	return p
}

// PolicyFor returns the policy of a Kyma with labels: the operator's
// default, raised by the Kyma's SignaturePolicyLabel. A value that is no
// policy is an error rather than ignored: a typo of "enforce" must not
// weaken what its author meant.
func (c *Checker) PolicyFor(labels map[string]string) (Policy, error) {
	v, ok := labels[shared.SignaturePolicyLabel]
	if !ok {
		return c.def, nil
	}
	p, err := ParsePolicy(v)
	if err != nil {
		return PolicyEnforce, fmt.Errorf("label %s: %w", shared.SignaturePolicyLabel, err)
	}
	return c.def.Raise(p), nil
}
