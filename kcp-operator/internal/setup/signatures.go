package setup

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

// signatures builds the module signature checker of --module-signature-policy
// and --module-trust-secret (both validated by options). The trust Secret
// is read directly, not through the manager's cache, which holds only the
// Secrets of Kymas; SecretTrust reads it again at most every few seconds.
func (b *builder) signatures() *signature.Checker {
	policy, _ := signature.ParsePolicy(b.opts.ModuleSignaturePolicy) // validated
	log := b.log.WithName("signatures")
	if b.opts.ModuleTrustSecret == "" {
		if policy != signature.PolicyOff {
			log.Info("module signatures are not checked: --module-trust-secret is not set")
		}
		return signature.NewChecker(policy, nil)
	}
	ns, name, _ := strings.Cut(b.opts.ModuleTrustSecret, "/")
	reader := b.mgr.GetAPIReader()
	source := &signature.SecretTrust{
		Name: b.opts.ModuleTrustSecret,
		Read: func(ctx context.Context) (map[string][]byte, string, error) {
			s := &corev1.Secret{}
			if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
				return nil, "", fmt.Errorf("reading Secret %s: %w", b.opts.ModuleTrustSecret, err)
			}
			return s.Data, s.ResourceVersion, nil
		},
	}
	log.Info("module signatures are checked", "policy", policy, "trustSecret", b.opts.ModuleTrustSecret)
	return signature.NewChecker(policy, source)
}
