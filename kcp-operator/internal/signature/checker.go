package signature

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/lifecycle-manager/api/v1beta2"
)

// TrustSource gives the current trust anchors, and a revision that changes
// whenever they do.
type TrustSource interface {
	Trust(ctx context.Context) (*Trust, string, error)
}

// Verdict is the outcome of a check that let the module through.
type Verdict struct {
	// Policy is the policy applied; off means nothing was checked.
	Policy Policy
	// Signer names who signed the module, when its signature verified.
	Signer string
	// Reason and Warning say why the module is installed unverified (policy
	// warn); empty when it verified.
	Reason, Warning string
}

// Checked reports whether the module's signature was looked at.
func (v Verdict) Checked() bool { return v.Policy != "" && v.Policy != PolicyOff }

const (
	// verdictTTL bounds how long a verdict is reused: a certificate's
	// validity is checked again at least this often.
	verdictTTL  = 10 * time.Minute
	maxVerdicts = 8192
)

// Checker applies the operator's policy to ModuleTemplates. It is safe for
// concurrent use.
type Checker struct {
	def    Policy
	source TrustSource
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu       sync.Mutex
	verdicts map[verdictKey]verdict
}

type verdictKey struct {
	template types.NamespacedName
	uid      types.UID
	version  string
	trust    string
	// descriptor is the digest of a descriptor read from the registry.
	descriptor string
}

type verdict struct {
	verified *Verified
	err      error
	expires  time.Time
}

// NewChecker returns a Checker with the operator's default policy and its
// trust anchors. Without anchors (source nil) the default is off, whatever
// def says: nothing could verify, and an operator upgraded without
// configuring trust must not warn about every module. A Kyma that raises
// its policy by label is then told that there are no anchors.
func NewChecker(def Policy, source TrustSource) *Checker {
	if source == nil {
		def = PolicyOff
	}
	return &Checker{def: def, source: source, verdicts: map[verdictKey]verdict{}}
}

// Default is the operator's policy for Kymas that do not raise it.
func (c *Checker) Default() Policy { return c.def }

// Check applies policy to a template. Under enforce, a template that is
// unsigned or whose signature does not verify is an *Error (refused);
// under warn it passes with a Verdict that says why it is unverified.
func (c *Checker) Check(ctx context.Context, policy Policy, t *v1beta2.ModuleTemplate) (Verdict, error) {
	return c.CheckWith(ctx, policy, t, nil)
}

// CheckWith is Check for a template whose descriptor is doc (read from
// the registry); a nil doc is the template's spec.descriptor.
func (c *Checker) CheckWith(ctx context.Context, policy Policy, t *v1beta2.ModuleTemplate, doc *Document) (Verdict, error) {
	if policy == PolicyOff || policy == "" {
		return Verdict{Policy: PolicyOff}, nil
	}
	v, err := c.verify(ctx, t, doc)
	if err == nil {
		return Verdict{Policy: policy, Signer: v.Signer}, nil
	}
	msg := fmt.Sprintf("ModuleTemplate %s/%s: %v", t.Namespace, t.Name, err)
	if policy == PolicyEnforce {
		return Verdict{Policy: policy}, &Error{Reason: ReasonOf(err), Err: fmt.Errorf("%s; refused by the module signature policy %s", msg, policy)}
	}
	return Verdict{Policy: policy, Reason: ReasonOf(err), Warning: msg}, nil
}

func (c *Checker) verify(ctx context.Context, t *v1beta2.ModuleTemplate, doc *Document) (*Verified, error) {
	if c.source == nil {
		return nil, fail(ReasonNoTrust, "no trust anchors are configured (--module-trust-secret)")
	}
	trust, revision, err := c.source.Trust(ctx)
	if err != nil {
		return nil, &Error{Reason: ReasonNoTrust, Err: fmt.Errorf("the trust anchors cannot be read: %w", err)}
	}
	now := c.now()
	key := verdictKey{template: types.NamespacedName{Namespace: t.Namespace, Name: t.Name}, uid: t.UID, version: t.ResourceVersion, trust: revision}
	if doc != nil {
		// The tag may move while the template stays as it is.
		key.descriptor = doc.Digest
	}
	if t.ResourceVersion != "" {
		if v, ok := c.cached(key, now); ok {
			return v.verified, v.err
		}
	}
	verified, err := VerifyTemplateWith(t, doc, trust, now)
	if t.ResourceVersion != "" {
		expires := now.Add(verdictTTL)
		if verified != nil && !verified.Expires.IsZero() && verified.Expires.Before(expires) {
			expires = verified.Expires
		}
		c.store(key, verdict{verified: verified, err: err, expires: expires}, now)
	}
	return verified, err
}

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Checker) cached(key verdictKey, now time.Time) (verdict, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.verdicts[key]
	if !ok || !now.Before(v.expires) {
		return verdict{}, false
	}
	return v, true
}

func (c *Checker) store(key verdictKey, v verdict, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.verdicts) >= maxVerdicts {
		for k, old := range c.verdicts {
			if !now.Before(old.expires) {
				delete(c.verdicts, k)
			}
		}
		if len(c.verdicts) >= maxVerdicts {
			clear(c.verdicts) // old template versions: cheap to verify again
		}
	}
	c.verdicts[key] = v
}
