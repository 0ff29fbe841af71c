package resolve

import (
	"context"

	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// WithSignatures makes the resolver check the signature of every template
// it resolves under the Kyma's signature policy: a module refused by the
// policy does not resolve (its *Error says why, and the Kyma's status
// shows it as the module's Error), one let through unverified carries the
// reason in Module.Signature.
func (r *Resolver) WithSignatures(c *signature.Checker) *Resolver {
	r.signatures = c
	return r
}

// checkSignature applies the Kyma's signature policy to a resolved module.
func (r *Resolver) checkSignature(ctx context.Context, kyma *v1beta2.Kyma, m *Module) error {
	if r.signatures == nil {
		return nil
	}
	policy, err := r.signatures.PolicyFor(kyma.Labels)
	if err != nil {
		return fail(m.Name, "Kyma %s/%s: %v", kyma.Namespace, kyma.Name, err)
	}
	verdict, err := r.signatures.CheckWith(ctx, policy, m.Template, m.Document)
	if err != nil {
		return fail(m.Name, "%v", err)
	}
	m.Signature = verdict
	return nil
}
