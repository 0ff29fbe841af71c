package kubeconfig_test

import (
	"errors"
	"net/url"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/lifecycle-manager/kcp-operator/internal/kubeconfig"
)

// FuzzKubeconfigCheck feeds arbitrary Secret contents to the check. It must
// never panic; a refusal is always a *RefusedError with a reason; and
// whatever it accepts by default authenticates with inline credentials
// only, to an https server. The invariant is checked here on the
// rest.Config, independently of the package's own rules.
func FuzzKubeconfigCheck(f *testing.F) {
	seeds := [][]byte{
		kubeconfigOf("", inlineToken),
		kubeconfigOf("", `client-certificate-data: Q0VSVA==, client-key-data: S0VZ`),
		kubeconfigOf("", `tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token`),
		kubeconfigOf("", `exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, id]}`),
		kubeconfigOf(`, proxy-url: "http://10.0.0.1:3128"`, inlineToken),
		kubeconfigOf(`, certificate-authority: /etc/ssl/ca.crt`, inlineToken),
		kubeconfigOf("", `username: a, password: b`),
		kubeconfigOf("", inlineToken+`, as: admin`),
		kubeconfigOf("", `auth-provider: {name: oidc}`),
		[]byte(`{"apiVersion":"v1","kind":"Config","current-context":"c","contexts":[{"name":"c","context":{"cluster":"x","user":"y"}}],` +
			`"clusters":[{"name":"x","cluster":{"server":"https://h"}}],"users":[{"name":"y","user":{"token":"t"}}]}`),
		[]byte("current-context: c\n"),
		{},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	// Files stays refused here: allowing it makes client-go open the paths
	// the fuzzer invents.
	var others []string
	for _, feat := range kubeconfig.Features() {
		if feat != kubeconfig.Files {
			others = append(others, string(feat))
		}
	}
	lenient, err := kubeconfig.ParseAllow(others)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := kubeconfig.Allow{}.RESTConfig(raw)
		if err != nil {
			var refused *kubeconfig.RefusedError
			if !errors.As(err, &refused) || len(refused.Problems) == 0 || cfg != nil {
				t.Fatalf("a refusal must be a *RefusedError with a reason and no config, got %v (%T)", err, err)
			}
		} else {
			assertOnlyInline(t, cfg)
		}
		if cfg, err := lenient.RESTConfig(raw); err == nil && (cfg.BearerTokenFile != "" || cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "") {
			t.Fatalf("files were not allowed, yet the client reads %q %q %q %q", cfg.BearerTokenFile, cfg.CAFile, cfg.CertFile, cfg.KeyFile)
		}
	})
}

func assertOnlyInline(t *testing.T, cfg *rest.Config) {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
		t.Fatalf("accepted a client of host %q", cfg.Host)
	}
	switch {
	case cfg.BearerTokenFile != "", cfg.CAFile != "", cfg.CertFile != "", cfg.KeyFile != "":
		t.Fatalf("accepted file credentials: %q %q %q %q", cfg.BearerTokenFile, cfg.CAFile, cfg.CertFile, cfg.KeyFile)
	case cfg.ExecProvider != nil, cfg.AuthProvider != nil, cfg.AuthConfigPersister != nil:
		t.Fatal("accepted a credential plugin")
	case cfg.Proxy != nil, cfg.Dial != nil, cfg.Transport != nil, cfg.WrapTransport != nil:
		t.Fatal("accepted a proxy or a custom transport")
	case cfg.Insecure:
		t.Fatal("accepted insecure TLS")
	case cfg.Username != "", cfg.Password != "":
		t.Fatal("accepted basic authentication")
	case cfg.Impersonate.UserName != "", cfg.Impersonate.UID != "", len(cfg.Impersonate.Groups) > 0, len(cfg.Impersonate.Extra) > 0:
		t.Fatal("accepted impersonation")
	}
}
