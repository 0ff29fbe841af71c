package componentsource

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// credentials returns the logins and the registry host: Config.Host, else
// the Secret's only login.
func (s *Source) credentials(ctx context.Context) (authn.Keychain, string, error) {
	if s.cfg.CredSecret.Name == "" {
		return nil, s.cfg.Host, nil
	}
	creds, err := s.secret(ctx)
	if err != nil {
		return nil, "", &Error{Reason: ReasonCredentials, Err: fmt.Errorf("the registry login Secret %s (--oci-registry-cred-secret): %w", s.cfg.CredSecret, err)}
	}
	if s.cfg.Host != "" {
		return creds, s.cfg.Host, nil
	}
	hosts := creds.Registries()
	if len(hosts) != 1 {
		return nil, "", &Error{Reason: ReasonCredentials, Err: fmt.Errorf(
			"the registry login Secret %s has %d logins; without --oci-registry-host it must have exactly one, the registry's", s.cfg.CredSecret, len(hosts))}
	}
	return creds, hosts[0], nil
}

// secret reads and parses the login Secret at most once per SecretTTL,
// parsing it again only when it changed.
func (s *Source) secret(ctx context.Context) (*oci.Credentials, error) {
	s.mu.Lock()
	l := s.login
	s.mu.Unlock()
	now := time.Now()
	if !l.readAt.IsZero() && now.Sub(l.readAt) < SecretTTL {
		return l.creds, l.err
	}
	var secret corev1.Secret
	err := s.cfg.Secrets.Get(ctx, s.cfg.CredSecret, &secret)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err // a cancelled reconcile says nothing about the Secret
	case err != nil:
		l = login{readAt: now, err: err}
	case secret.ResourceVersion == l.revision && l.err == nil && l.creds != nil:
		l.readAt = now
	default:
		l = login{readAt: now, revision: secret.ResourceVersion}
		if secret.Type != "" && secret.Type != corev1.SecretTypeDockerConfigJson && secret.Type != corev1.SecretTypeDockercfg {
			l.err = fmt.Errorf("type %s, want %s", secret.Type, corev1.SecretTypeDockerConfigJson)
		} else if l.creds, l.err = oci.CredentialsFromSecretData(secret.Data); l.err == nil && len(l.creds.Registries()) == 0 {
			l.creds, l.err = nil, errors.New("it has no login")
		}
	}
	s.mu.Lock()
	s.login = l
	s.mu.Unlock()
	return l.creds, l.err
}
